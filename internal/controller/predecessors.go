package controller

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// A resource a predecessor operator (helm-operator-plugins, operator-sdk's
// Helm operator) reconciled carries its finalizer (api.PredecessorFinalizers).
// It serves as chartkeeper's own: chartkeeper adds none beside it (so
// that, switched back, the predecessor finds only its own), and deleting
// the resource uninstalls the release once, then removes it (with
// chartkeeper's, if an earlier version added it) (reconciler.go); no
// other finalizer is touched. Never while the release is another's or
// left alone as forged: then only chartkeeper's goes.

// predecessorFinalizers returns the predecessors' finalizers obj carries.
func predecessorFinalizers(obj *unstructured.Unstructured) []string {
	var out []string
	for _, f := range api.PredecessorFinalizers() {
		if slices.Contains(obj.GetFinalizers(), f) {
			out = append(out, f)
		}
	}
	return out
}

// onlyReleaseFinalizers reports whether every finalizer obj carries is
// chartkeeper's, or, with predecessors, a predecessor's: removing them
// lets the resource go.
func onlyReleaseFinalizers(obj *unstructured.Unstructured, predecessors bool) bool {
	for _, f := range obj.GetFinalizers() {
		if f != api.Finalizer && (!predecessors || !slices.Contains(api.PredecessorFinalizers(), f)) {
			return false
		}
	}
	return true
}
