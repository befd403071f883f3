package controller

import (
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// A resource a predecessor operator (helm-operator-plugins, operator-sdk's
// Helm operator) reconciled carries its finalizer (api.PredecessorFinalizers)
// beside chartkeeper's. They are honoured for a release chartkeeper has
// taken over: deleting the resource uninstalls the release once, then both
// go with chartkeeper's (reconciler.go); no other finalizer is touched. A
// resource deleted with only a predecessor's finalizer (chartkeeper never
// reconciled it before) is uninstalled the same way.

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
