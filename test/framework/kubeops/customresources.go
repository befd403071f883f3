package kubeops

import (
	"context"
	"encoding/json"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// CustomResources writes the custom resources of one kind the way the
// harnesses (bench, chaos, soak) drive an operator: created with a spec,
// the spec replaced by a merge patch, deleted.
type CustomResources struct {
	Dynamic dynamic.Interface
	GVR     schema.GroupVersionResource
	GVK     schema.GroupVersionKind
}

// Namespace is the client of the kind's resources in namespace ns.
func (c CustomResources) Namespace(ns string) dynamic.ResourceInterface {
	return c.Dynamic.Resource(c.GVR).Namespace(ns)
}

// Create creates the custom resource k with spec.
func (c CustomResources) Create(ctx context.Context, k types.NamespacedName, spec map[string]any) error {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(c.GVK)
	u.SetNamespace(k.Namespace)
	u.SetName(k.Name)
	_, err := c.Namespace(k.Namespace).Create(ctx, u, metav1.CreateOptions{})
	return err
}

// PatchSpec writes spec (anything encoding/json encodes as an object) to
// the custom resource k with a JSON merge patch.
func (c CustomResources) PatchSpec(ctx context.Context, k types.NamespacedName, spec any) error {
	body, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return err
	}
	_, err = c.Namespace(k.Namespace).Patch(ctx, k.Name, types.MergePatchType, body, metav1.PatchOptions{})
	return err
}

// Delete deletes the custom resource k; one already gone is no error.
func (c CustomResources) Delete(ctx context.Context, k types.NamespacedName) error {
	err := c.Namespace(k.Namespace).Delete(ctx, k.Name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Gone reports whether the API server answers that the custom resource k
// does not exist (deleted, its finalizers done). Any other error is not
// gone.
func (c CustomResources) Gone(ctx context.Context, k types.NamespacedName) bool {
	_, err := c.Namespace(k.Namespace).Get(ctx, k.Name, metav1.GetOptions{})
	return apierrors.IsNotFound(err)
}
