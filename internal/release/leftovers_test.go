package release

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// Only objects of this release (owner annotation and Helm's annotations
// both naming it) that the deployed revision does not hold are leftovers;
// pruning deletes them and nothing else, and tolerates one already gone.
// Kept objects (helm.sh/resource-policy: keep) are never leftovers.
func TestLeftoversAndPrune(t *testing.T) {
	const owner = "test.chartkeeper.dev/App/ns/web"
	ref := watches.ReleaseRef{Name: "web", Namespace: "ns"}
	cm := func(ns, name string, annotations map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{api.LabelManaged: "true"}, Annotations: annotations}}
	}
	ours := map[string]string{api.AnnotationOwner: owner, helmReleaseName: "web", helmReleaseNamespace: "ns"}
	c := fake.NewClientBuilder().WithObjects(
		cm("ns", "web-config", ours),
		cm("ns", "web-extra-7", ours), // a failed revision's
		cm("ns", "other-config", map[string]string{api.AnnotationOwner: "test.chartkeeper.dev/App/ns/other", helmReleaseName: "other", helmReleaseNamespace: "ns"}),
		cm("ns", "not-helms", map[string]string{api.AnnotationOwner: owner}),
		cm("elsewhere", "web-extra-8", ours),
		cm("ns", "web-kept", map[string]string{api.AnnotationOwner: owner, helmReleaseName: "web", helmReleaseNamespace: "ns",
			"helm.sh/resource-policy": "keep"}), // Helm kept it when an upgrade dropped it
	).Build()
	e := &Engine{meta: c, live: c}
	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	held := []object{{GVK: cmGVK, Namespace: "ns", Name: "web-config"}}
	ctx := context.Background()

	left, err := e.leftovers(ctx, ref, owner, held)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].String() != "ConfigMap ns/web-extra-7" {
		t.Fatalf("leftovers %v, want only ConfigMap ns/web-extra-7", left)
	}
	if err := e.prune(ctx, left); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web-extra-7"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Errorf("the leftover is still there: %v", err)
	}
	for _, keep := range []client.ObjectKey{{Namespace: "ns", Name: "web-config"}, {Namespace: "ns", Name: "other-config"},
		{Namespace: "ns", Name: "not-helms"}, {Namespace: "elsewhere", Name: "web-extra-8"}, {Namespace: "ns", Name: "web-kept"}} {
		if err := c.Get(ctx, keep, &corev1.ConfigMap{}); err != nil {
			t.Errorf("%s was deleted: %v", keep, err)
		}
	}
	if err := e.prune(ctx, left); err != nil {
		t.Errorf("pruning what is gone: %v", err)
	}
	if left, err := e.leftovers(ctx, ref, owner, held); err != nil || len(left) != 0 {
		t.Errorf("after the prune: leftovers %v, %v", left, err)
	}
}

func TestListObjects(t *testing.T) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	objs := []object{{GVK: gvk, Namespace: "a", Name: "x"}, {GVK: gvk, Namespace: "a", Name: "y"}, {GVK: gvk, Namespace: "a", Name: "z"}}
	if got := listObjects(objs, 2); got != "ConfigMap a/x, ConfigMap a/y, and 1 more" {
		t.Errorf("listObjects: %q", got)
	}
	if got := listObjects(objs[:1], 2); got != "ConfigMap a/x" {
		t.Errorf("listObjects: %q", got)
	}
}
