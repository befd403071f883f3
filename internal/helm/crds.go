package helm

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"

	"helm.sh/helm/v3/pkg/kube"
)

// Helm never deletes a CRD for chartkeeper. The CRDs a chart ships are
// applied by the engine's CRD step and are no part of new revisions; a
// revision made before that (a templated CRD in its manifest) must not
// lose its CRD, and every custom resource of its kind, when an upgrade or
// a rollback drops it or the release is uninstalled. So the kube client
// leaves CRDs out of what it deletes, and out of the previous objects an
// update compares with (Helm deletes those the new revision lacks; see
// Update in update.go).

func isCRDInfo(info *resource.Info) bool {
	gvk := info.Object.GetObjectKind().GroupVersionKind()
	return gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}

// withoutCRDs is rl less its CRDs.
func withoutCRDs(rl kube.ResourceList) kube.ResourceList {
	return rl.Filter(func(info *resource.Info) bool { return !isCRDInfo(info) })
}

// Delete and DeleteWithPropagationPolicy first let an install that has
// not read its objects yet read them (a hook's deletion is a write; see
// createFirst), then delete every kind at once (see deleteTogether).
// Helm's Delete propagates in the background.
func (c reachedClient) Delete(rl kube.ResourceList) (*kube.Result, []error) {
	return c.DeleteWithPropagationPolicy(rl, metav1.DeletePropagationBackground)
}

func (c reachedClient) DeleteWithPropagationPolicy(rl kube.ResourceList, policy metav1.DeletionPropagation) (*kube.Result, []error) {
	if err := c.fresh.beforeOtherWrite(); err != nil {
		return nil, []error{err}
	}
	return deleteTogether(c.Client, withoutCRDs(rl), policy, c.gone)
}

func (c reachedClient) UpdateThreeWayMerge(original, target kube.ResourceList, force bool) (*kube.Result, error) {
	if err := c.fresh.beforeOtherWrite(); err != nil {
		return nil, err
	}
	return c.Client.UpdateThreeWayMerge(withoutCRDs(original), target, force)
}
