package release

import (
	"context"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// install installs the release from the desired chart and values (the
// action of StateAbsent). PreRelease hooks run before it.
type install struct{}

func (install) kind() ActionKind { return ActionInstall }

func (install) hooksBefore(*step) hookPhase { return preReleaseHooks }

func (install) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	req, err := s.request(ctx)
	if err != nil {
		return nil, err
	}
	req.DisableHooks = s.steer.installDisableHooks
	if d := s.steer.installDescription; d != "" {
		req.Description = d
	}
	return s.e.helm.Install(ctx, req)
}

// succeeded: status.release names the new revision, the failure count and
// any terminal error are cleared, Event and Released True
// InstallSucceeded, Remediated dropped.
func (i install) succeeded(s *step, out outcome) {
	s.releasedDesired(i, out, api.ReasonInstallSucceeded)
}

// failed: a missing namespace or CRD, or RBAC, before Helm stored anything
// is backed off and retried (MissingDependency, Forbidden); values the
// chart rejects before Helm stored anything are a terminal ChartError until
// they change; an install Helm stored as failed
// counts toward remediation: Event and Released False InstallFailed.
func (i install) failed(s *step, out outcome, err error) bool {
	if s.crdRefused(i, out, err) || s.dependencyMissing(i, out, err) || s.chartRejected(i, out, err) {
		return false
	}
	s.recordRevision(i, out)
	return s.failure(i, out, err, api.ReasonInstallFailed, true)
}
