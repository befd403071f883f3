package release

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/values"
)

// FilePlan is the plan of the upgrade a custom resource (as written in a
// file, say) would make of its release: status.plan as the operator would
// write it, and every change in full for a diff.
type FilePlan struct {
	// Status is what status.plan would say; its Digest is the digest a
	// person approves.
	Status *api.PlanStatus
	// Changes are the changes in full, as the API server answered the dry
	// runs.
	Changes []helm.Change
	// Redact hides, in any text, the values the chart marks secret and
	// every value a Secret of valuesFrom gives, now or gave the deployed
	// revision (which the live objects may hold).
	Redact func(string) string
	// Release names the release.
	ReleaseName, ReleaseNamespace string
}

// Plan computes, without an operator, what applying obj would do to its
// release if the desired chart and values it makes were upgraded to: the
// plan the operator writes for manual approval (plan.go), by the same
// steps (annotations, valuesFrom read from the cluster, Go hooks, values,
// account), with the same digest for the same resource, spec, release and
// live objects. obj carries the spec to plan (from a file) and the
// identity of the resource in the cluster (its UID, which released objects
// are labelled with and the digest covers). A resource without a release
// yet has nothing to plan against: applying it installs.
func (e *Engine) Plan(ctx context.Context, t Target, obj *unstructured.Unstructured) (*FilePlan, error) {
	sg := steeringOf(obj.GetAnnotations())
	t = sg.overlay(t)
	if sg.refused != nil {
		return nil, sg.refused
	}
	ctx = helm.WithStorage(ctx, helm.Storage(t.Watch.ReleaseStorage()))
	s := &step{e: e, t: t, obj: obj, st: &api.Status{}, steer: sg, chain: hookChain(e.hooks.For(t.Watch.GroupVersionKind().GroupKind()))}
	if err := s.readValuesFrom(ctx); err != nil {
		return nil, err
	}
	if err := s.desire(ctx); err != nil {
		return nil, fmt.Errorf("running the Go hooks: %w", err)
	}
	if s.d.err != nil {
		return nil, s.d.err
	}
	ctx = withAccount(ctx, s.d.account)
	revs, err := e.helm.StoredRevisions(ctx, s.d.ref.Name, s.d.ref.Namespace)
	if err != nil {
		return nil, err
	}
	if len(revs) == 0 {
		return nil, fmt.Errorf("release %s/%s does not exist: applying the resource installs it (nothing to plan against)", s.d.ref.Namespace, s.d.ref.Name)
	}
	redact, err := e.planRedactor(ctx, s)
	if err != nil {
		return nil, s.d.redact.Error(err)
	}
	s.o.PlanInputs = planInputs(obj, s.d, sg, revs[len(revs)-1].Version)
	hp, err := e.planOf(ctx, s)
	if err != nil {
		return nil, redact.Error(err)
	}
	return &FilePlan{Status: planStatus(hp, planDigest(s.o.PlanInputs, hp.Changes), t.Watch), Changes: hp.Changes, Redact: redact.Redact,
		ReleaseName: s.d.ref.Name, ReleaseNamespace: s.d.ref.Namespace}, nil
}

// planRedactor hides what the step's redactor hides, and the secrets of
// the deployed revision's values, which the live objects the plan shows
// may hold: those the chart marks secret, and those where the Secrets of
// valuesFrom put theirs.
func (e *Engine) planRedactor(ctx context.Context, s *step) (*values.Redactor, error) {
	latest, err := e.helm.Get(ctx, s.d.ref.Name, s.d.ref.Namespace, 0)
	if err != nil {
		return nil, fmt.Errorf("reading the deployed revision: %w", err)
	}
	secrets := s.d.secrets
	if latest != nil {
		secrets = append(append(append([]string(nil), secrets...), values.SecretStrings(s.t.Watch.Chart, latest.Config)...), s.from.secretsIn(latest.Config)...)
	}
	return values.NewRedactor(secrets), nil
}
