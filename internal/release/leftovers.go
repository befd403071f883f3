package release

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// Helm's annotations on every object it creates.
const (
	helmReleaseName      = "meta.helm.sh/release-name"
	helmReleaseNamespace = "meta.helm.sh/release-namespace"
)

// leftovers finds objects of the release that its deployed revision does
// not hold: what a failed or interrupted revision created and no later
// action deleted. Helm diffs an upgrade against the last deployed
// revision, so an object only a failed revision held is invisible to it:
// an upgrade killed half-way, then an upgrade to a smaller spec, leaves it
// behind for good.
//
// It searches the metadata cache, for the kinds of the deployed revision,
// in the release namespace; an object counts only when it carries both
// this resource's owner annotation and Helm's annotations for this
// release. Kinds only a failed revision released, and objects outside the
// release namespace, are not searched. Objects marked
// helm.sh/resource-policy: keep are left alone: Helm keeps them on purpose
// when an upgrade drops them.
func (e *Engine) leftovers(ctx context.Context, ref watches.ReleaseRef, owner string, objs []object) ([]object, error) {
	held := map[string]bool{}
	kinds := map[schema.GroupVersionKind]bool{}
	for _, ob := range objs {
		held[ob.String()] = true
		if ob.Namespace == ref.Namespace {
			kinds[ob.GVK] = true
		}
	}
	var out []object
	for gvk := range kinds {
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := e.meta.List(ctx, &list, client.InNamespace(ref.Namespace), client.MatchingLabels{api.LabelManaged: "true"},
			client.UnsafeDisableDeepCopy); err != nil { // read only
			return nil, fmt.Errorf("listing %s for leftovers: %w", gvk.Kind, err)
		}
		for _, m := range list.Items {
			a := m.GetAnnotations()
			if m.GetDeletionTimestamp() != nil || ownership.Kept(a) || a[api.AnnotationOwner] != owner ||
				a[helmReleaseName] != ref.Name || a[helmReleaseNamespace] != ref.Namespace {
				continue
			}
			ob := object{GVK: gvk, Namespace: m.GetNamespace(), Name: m.GetName()}
			if !held[ob.String()] {
				out = append(out, ob)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// listObjects names up to n objects, and how many more there are.
func listObjects(objs []object, n int) string {
	names := make([]string, 0, min(len(objs), n)+1)
	for i, ob := range objs {
		if i == n {
			names = append(names, fmt.Sprintf("and %d more", len(objs)-n))
			break
		}
		names = append(names, ob.String())
	}
	return strings.Join(names, ", ")
}
