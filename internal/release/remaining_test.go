package release

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// Deletion waits for the released objects that still exist, except those
// marked helm.sh/resource-policy: keep (Helm's uninstall leaves them).
func TestCountRemainingSkipsKeptObjects(t *testing.T) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	ob := func(name, policy string) object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetNamespace("ns")
		u.SetName(name)
		if policy != "" {
			u.SetAnnotations(map[string]string{"helm.sh/resource-policy": policy})
		}
		o, err := newObject(gvk, "ns", u)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	c := fake.NewClientBuilder().WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "plain"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "kept"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other-policy"}},
	).Build()
	e := &Engine{meta: c, live: c}
	for _, tc := range []struct {
		name string
		objs []object
		want int
	}{
		{"none", nil, 0},
		{"present", []object{ob("plain", "")}, 1},
		{"gone", []object{ob("deleted", "")}, 0},
		{"kept", []object{ob("kept", "keep")}, 0},
		{"another policy", []object{ob("other-policy", "delete")}, 1},
		{"mixed", []object{ob("plain", ""), ob("kept", "keep"), ob("deleted", "")}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := e.countRemaining(context.Background(), tc.objs); got != tc.want {
				t.Errorf("countRemaining = %d, want %d", got, tc.want)
			}
		})
	}
}
