package kubeops

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/fake"
)

func TestCustomResourcesWriteTheSpec(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "Web"}
	gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: "webs"}
	dyn := fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "WebList"})
	c := CustomResources{Dynamic: dyn, GVR: gvr, GVK: gvk}
	ctx := context.Background()
	k := types.NamespacedName{Namespace: "team", Name: "web"}

	if !c.Gone(ctx, k) {
		t.Fatal("Gone before the create: false")
	}
	if err := c.Create(ctx, k, map[string]any{"replicas": int64(1), "message": "m1"}); err != nil {
		t.Fatal(err)
	}
	if err := c.PatchSpec(ctx, k, struct {
		Message string `json:"message"`
	}{"m2"}); err != nil {
		t.Fatal(err)
	}
	u, err := c.Namespace(k.Namespace).Get(ctx, k.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u.GroupVersionKind() != gvk {
		t.Errorf("kind %v, want %v", u.GroupVersionKind(), gvk)
	}
	replicas, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	message, _, _ := unstructured.NestedString(u.Object, "spec", "message")
	if replicas != 1 || message != "m2" {
		t.Errorf("spec after the patch: %v, want replicas 1 (kept), message m2", u.Object["spec"])
	}
	if c.Gone(ctx, k) {
		t.Fatal("Gone after the create: true")
	}
	for range 2 { // the second delete finds nothing: no error
		if err := c.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if !c.Gone(ctx, k) {
		t.Fatal("Gone after the delete: false")
	}
}
