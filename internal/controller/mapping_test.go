package controller

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// testSecretToResource: once a resource was reconciled, its release key
// ("<namespace>/<release>", what a Helm release Secret's namespace and
// name label give) maps to it; other keys map to nothing.
func (e *env) testSecretToResource(t *testing.T) {
	f := e.newFixture(t, fixtureOptions{watch: "  releaseName: \"rel-{{ .Name }}\"\n"})
	f.start(t)
	r := f.reconciler(e.cl)
	const name = "mapped"
	f.create(t, f.note(name, nil))
	if _, ok := r.ownerOf(f.ns + "/rel-" + name); ok {
		t.Fatal("a release maps to a resource before any reconcile")
	}
	f.settle(t, r, name)

	tests := []struct {
		name    string
		key     string
		want    types.NamespacedName
		wantHit bool
	}{
		{name: "its release", key: f.ns + "/rel-" + name, want: types.NamespacedName{Namespace: f.ns, Name: name}, wantHit: true},
		{name: "the resource's own name is not the release's", key: f.ns + "/" + name},
		{name: "unknown release", key: f.ns + "/rel-other"},
		{name: "same release name in another namespace", key: "elsewhere/rel-" + name},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := r.ownerOf(tc.key)
			if ok != tc.wantHit || got != tc.want {
				t.Errorf("ownerOf(%q) = %v, %v; want %v, %v", tc.key, got, ok, tc.want, tc.wantHit)
			}
		})
	}

	// The release Secrets of the resource are the ones the key names.
	var list corev1.SecretList
	if err := e.cl.List(context.Background(), &list, client.InNamespace(f.ns), client.MatchingLabels{"owner": "helm"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) == 0 {
		t.Fatal("no Helm release Secret")
	}
	for _, s := range list.Items {
		if got, ok := r.ownerOf(s.Namespace + "/" + s.Labels["name"]); !ok || got.Name != name {
			t.Errorf("release Secret %s maps to %v, %v; want %s", s.Name, got, ok, name)
		}
	}
}

// testSecretEventReconciles: with the controller running, an event on a
// resource's Helm release Secret (someone else touching the release)
// reconciles the resource. Released objects are not watched here and there
// is no period, so once the resource is ready nothing else reconciles it.
func (e *env) testSecretEventReconciles(t *testing.T) {
	var gets atomic.Int32 // reads of the resource by the controller: one per reconcile
	const name = "evented"
	countGets := func(cfg *rest.Config, o client.Options) (client.Client, error) {
		base, err := client.NewWithWatch(cfg, o)
		if err != nil {
			return nil, err
		}
		return interceptor.NewClient(base, interceptor.Funcs{
			Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if _, ok := obj.(*unstructured.Unstructured); ok && key.Name == name {
					gets.Add(1)
				}
				return cl.Get(ctx, key, obj, opts...)
			},
		}), nil
	}
	f := e.newFixture(t, fixtureOptions{watch: "  watchDependentResources: false\n", newClient: countGets})
	f.setup(t)
	f.start(t)
	f.create(t, f.note(name, nil))
	testenv.Eventually(t, waitTimeout, func(ctx context.Context) error { return f.ready(ctx, name) })

	var list corev1.SecretList
	if err := e.cl.List(context.Background(), &list, client.InNamespace(f.ns), client.MatchingLabels{"owner": "helm", "name": name}); err != nil || len(list.Items) == 0 {
		t.Fatalf("release Secrets of %s: %d (%v)", name, len(list.Items), err)
	}
	before := gets.Load()
	s := &list.Items[0]
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	s.Annotations["example.com/touched"] = "true"
	if err := e.cl.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, waitTimeout, func(context.Context) error {
		if n := gets.Load(); n <= before {
			return fmt.Errorf("no reconcile of %s after its release Secret changed", name)
		}
		return nil
	})
}
