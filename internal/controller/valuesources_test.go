package controller

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/chartkeeper/chartkeeper/internal/release"
	"github.com/chartkeeper/chartkeeper/internal/watches"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// The valuesFrom watches, on a real API server: a resource's objects are
// read once their watch has listed them, a change of one (its creation
// included) reconciles every resource that names it and no other, another
// Secret of the namespace is never seen, and the watches stop with the
// last resource that names them.
func (e *env) testValuesSources(t *testing.T) {
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "sources-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v := newValuesSources(cs, logr.Discard())
	t.Cleanup(v.cancel)
	gk := schema.GroupKind{Group: group, Kind: kind}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	t.Cleanup(q.ShutDown)
	if err := v.For(gk).Start(ctx, q); err != nil {
		t.Fatal(err)
	}
	res := func(name string) release.Resource {
		return release.Resource{GroupKind: gk, NamespacedName: types.NamespacedName{Namespace: ns.Name, Name: name}}
	}
	shared := watches.SourceObject{Kind: watches.SourceConfigMap, Namespace: ns.Name, Name: "shared"}
	own := watches.SourceObject{Kind: watches.SourceSecret, Namespace: ns.Name, Name: "a-values"}

	v.Use(res("a"), []watches.SourceObject{shared, own})
	v.Use(res("b"), []watches.SourceObject{shared})
	if _, found, err := v.Read(ctx, own); err != nil || found {
		t.Fatalf("a Secret not created yet: found %v, %v", found, err)
	}
	// Its creation reconciles a, and b does not hear of it.
	if _, err := cs.CoreV1().Secrets(ns.Name).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "a-values"},
		StringData: map[string]string{"values.yaml": "x: 1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantRequests(t, q, "a")
	if data, found, err := v.Read(ctx, own); err != nil || !found || string(data["values.yaml"]) != "x: 1" {
		t.Fatalf("read %q %v %v", data, found, err)
	}
	// A change of the shared ConfigMap reconciles both.
	if _, err := cs.CoreV1().ConfigMaps(ns.Name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared"},
		Data: map[string]string{"values.yaml": "y: 2"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantRequests(t, q, "a", "b")
	// Another Secret of the namespace, then a change of a's: only a's is
	// in the watch's store (the field selector), and its change is heard.
	if _, err := cs.CoreV1().Secrets(ns.Name).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "unrelated"},
		StringData: map[string]string{"values.yaml": "z: 3"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(ns.Name).Update(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "a-values", Namespace: ns.Name},
		StringData: map[string]string{"values.yaml": "x: 4"}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantRequests(t, q, "a")
	v.mu.Lock()
	keys := v.watches[own].informer.GetStore().ListKeys()
	v.mu.Unlock()
	if !slices.Equal(keys, []string{ns.Name + "/a-values"}) {
		t.Errorf("the Secret's watch holds %v", keys)
	}
	// The last user gone, nothing is watched.
	v.Use(res("a"), nil)
	v.Use(res("b"), nil)
	v.mu.Lock()
	left := len(v.watches)
	v.mu.Unlock()
	if left != 0 {
		t.Errorf("%d watches left", left)
	}
}

// wantRequests takes the queue's next requests, which must be exactly the
// resources named (in any order).
func wantRequests(t *testing.T, q workqueue.TypedRateLimitingInterface[reconcile.Request], names ...string) {
	t.Helper()
	var got []string
	for range names {
		done := make(chan reconcile.Request, 1)
		go func() {
			r, _ := q.Get()
			done <- r
		}()
		var r reconcile.Request
		testenv.Eventually(t, waitTimeout, func(context.Context) error {
			select {
			case r = <-done:
				return nil
			default:
				return fmt.Errorf("no request yet, want %v (got %v)", names, got)
			}
		})
		q.Done(r)
		got = append(got, r.Name)
	}
	slices.Sort(got)
	want := slices.Clone(names)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("requests %v, want %v", got, want)
	}
}
