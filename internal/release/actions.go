package release

import (
	"context"
	"fmt"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/images"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/internal/values"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// action is one of the seven things a step can do. Each is a small type; run
// does the work and returns the release it made, if it has it.
type action interface {
	run(ctx context.Context, s *step) (*helmrelease.Release, error)
}

func actionFor(d Decision) action {
	switch d.Action {
	case ActionInstall:
		return install{}
	case ActionUpgrade:
		return upgrade{}
	case ActionRollback:
		return rollback{to: d.RollbackTo}
	case ActionUninstall:
		return uninstall{}
	case ActionUnlock:
		return unlock{}
	case ActionCorrectDrift:
		return correctDrift{}
	case ActionPrune:
		return prune{}
	}
	return nil
}

// request builds the Install/Upgrade request, checking the values against
// the chart's schema first: a rejection is a *ChartError.
func (s *step) request() (helm.Request, error) {
	w := s.t.Watch
	if err := values.Validate(w.Chart, s.d.values); err != nil {
		return helm.Request{}, &ChartError{Err: fmt.Errorf("values rejected by chart %s: %w", w.Chart.Metadata.Name, err)}
	}
	owner := ownership.Owner{GVK: s.obj.GroupVersionKind(), Namespace: s.obj.GetNamespace(), Name: s.obj.GetName(), UID: s.obj.GetUID()}
	admit := admitScope(w.Scope, s.d.ref.Namespace)
	return helm.Request{
		Name:       s.d.ref.Name,
		Namespace:  s.d.ref.Namespace,
		Chart:      w.Chart,
		Values:     s.d.values,
		Labels:     map[string]string{api.LabelManaged: "true", api.LabelDigest: s.d.digest},
		MaxHistory: w.Policy.MaxHistory,
		PostRenderer: ownership.PostRenderer{
			Owner: owner, ReleaseNamespace: s.d.ref.Namespace, Mapper: s.e.helm.Mapper(),
			Edit: relocate(w.Images), Admit: admit,
		},
		Guard:       s.guard(admit), // hooks are not post-rendered: the kube client checks them
		Description: fmt.Sprintf("chartkeeper: %s %s/%s generation %d", owner.GVK.Kind, owner.Namespace, owner.Name, s.obj.GetGeneration()),
	}, nil
}

// guard is what Helm is given to keep an action in scope and its logs free
// of secret values.
func (s *step) guard(admit helm.Admit) helm.Guard {
	secrets := s.d.secrets
	return helm.Guard{Admit: admit, Redact: func(line string) string { return values.Redact(line, secrets) }}
}

// Install installs the release.
type install struct{}

func (install) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	req, err := s.request()
	if err != nil {
		return nil, err
	}
	return s.e.helm.Install(ctx, req)
}

// Upgrade upgrades the release to the desired chart and values.
type upgrade struct{}

func (upgrade) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	req, err := s.request()
	if err != nil {
		return nil, err
	}
	return s.e.helm.Upgrade(ctx, req)
}

// Rollback rolls back to the last deployed revision.
type rollback struct{ to int }

func (r rollback) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	return nil, s.e.helm.Rollback(ctx, s.d.ref.Name, s.d.ref.Namespace, r.to, s.t.Watch.Policy.MaxHistory,
		s.guard(admitScope(s.t.Watch.Scope, s.d.ref.Namespace)))
}

// Uninstall removes the release and its history; on deletion it first
// remembers the released objects, to wait for them to go.
type uninstall struct{}

func (uninstall) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	if s.o.Latest != nil {
		_, _ = s.e.objects(ctx, s.d.ref, s.o.Latest.Version)
	}
	return nil, s.e.helm.Uninstall(ctx, s.d.ref.Name, s.d.ref.Namespace,
		fmt.Sprintf("chartkeeper: %s", s.dec.Message))
}

// Unlock marks a revision left pending by an interrupted operation failed.
type unlock struct{}

func (unlock) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	rel, err := s.e.helm.Unlock(ctx, s.d.ref.Name, s.d.ref.Namespace)
	if err == helm.ErrNotLocked {
		return rel, nil // someone finished it meanwhile
	}
	return rel, err
}

// CorrectDrift restores deleted or edited released objects, without a new revision.
type correctDrift struct{}

func (correctDrift) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	drifted := map[string]bool{}
	for _, d := range s.o.Drift {
		drifted[d] = true
	}
	var fix []object
	for _, ob := range s.objs {
		if drifted[ob.String()+" (deleted)"] || drifted[ob.String()+" (edited)"] {
			fix = append(fix, ob)
		}
	}
	return nil, s.e.correct(ctx, releaseKey(s.d.ref), fix)
}

// Prune deletes the objects earlier revisions left (Observation.Leftovers).
type prune struct{}

func (prune) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	return nil, s.e.prune(ctx, s.o.Leftovers)
}

// relocate is the post-render edit of a watch's images setting (nil: none).
func relocate(c *watches.ImagesConfig) func(map[string]any) error {
	if c == nil {
		return nil
	}
	return images.Relocation{Registry: c.Registry, PullSecrets: c.PullSecrets}.Apply
}
