package controller

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/intern"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
)

// dependentMeta is a released object's metadata as the dependents cache
// keeps it: identity, versions, deletion, every label (the caches select
// by them; a release Secret's name them), and of the annotations those the
// engine reads (chartkeeper's, Helm's release ownership, the keep policy),
// each string shared with the other objects' (package intern). Other
// annotations, owner references and finalizers are read from this cache by
// nobody: a chart that puts a large annotation on its objects no longer
// costs memory per object for it.
func dependentMeta(m *metav1.PartialObjectMetadata) *metav1.PartialObjectMetadata {
	out := &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		Generation: m.Generation, CreationTimestamp: m.CreationTimestamp,
		DeletionTimestamp: m.DeletionTimestamp, DeletionGracePeriodSeconds: m.DeletionGracePeriodSeconds,
		Labels: m.Labels, Annotations: keptOf(m.Annotations, readAnnotation),
	}}
	intern.Default.Meta(out)
	return out
}

// readAnnotation: the annotations the engine reads of a released object:
// chartkeeper's (chartkeeper.dev/...), Helm's release ownership
// (meta.helm.sh/...) and the keep policy.
func readAnnotation(k string) bool {
	return strings.HasPrefix(k, api.Prefix) || strings.HasPrefix(k, "meta.helm.sh/") || k == ownership.ResourcePolicyAnnotation
}

func keptOf(m map[string]string, keep func(string) bool) map[string]string {
	var out map[string]string
	for k, v := range m {
		if keep(k) {
			if out == nil {
				out = make(map[string]string, len(m))
			}
			out[k] = v
		}
	}
	return out
}
