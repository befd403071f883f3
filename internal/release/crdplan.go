package release

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
)

// A plan (plan.go) lists what the upgrade's CRD step would write, as the
// CRD step decides it: the templated CRDs are taken out of the planned
// manifest (as the upgrade's post-renderer takes them out) and admitted as
// the upgrade would admit them; a CRD the policy would create is planned
// to be created, one create-and-replace would apply to, updated, with the
// fields a dry-run apply changes. A refusal (CRDUpgradeRefused,
// CRDTemplateRefused, the scope) fails the plan with its words.

// collectCRDs makes r's post-renderer hand the templated CRDs to *into
// rather than apply them.
func collectCRDs(r *helm.Request, into *[]*unstructured.Unstructured) {
	if pr, ok := r.PostRenderer.(ownership.PostRenderer); ok {
		pr.CRDs = func(crds []*unstructured.Unstructured) error {
			*into = crds
			return nil
		}
		r.PostRenderer = pr
	}
}

// crdChanges is what the step's CRD step would write, as plan changes
// (CRDs first: they are written before anything else).
func (s *step) crdChanges(ctx context.Context, templated []*unstructured.Unstructured) ([]helm.Change, error) {
	cs, err := s.planCRDStep(ctx, templated)
	if err != nil {
		return nil, err
	}
	var out []helm.Change
	for _, c := range cs.plan.create {
		out = append(out, helm.Change{Action: helm.ChangeCreate, GVK: crdGVK, Name: c.GetName(), After: c})
	}
	for _, r := range cs.plan.replace {
		if len(ChangedFields(r.old, r.after)) == 0 {
			continue
		}
		out = append(out, helm.Change{Action: helm.ChangeUpdate, GVK: crdGVK, Name: r.want.GetName(), Before: r.old, After: r.after})
	}
	return out, nil
}
