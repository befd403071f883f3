package release

import (
	"context"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// upgrade upgrades the release to the desired chart and values (the action
// of StateOutOfSync, and the retry after a failed rollback). PreRelease
// hooks run before it.
type upgrade struct{}

func (upgrade) kind() ActionKind { return ActionUpgrade }

func (upgrade) hooksBefore(*step) hookPhase { return preReleaseHooks }

func (upgrade) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	req, err := s.request(ctx)
	if err != nil {
		return nil, err
	}
	req.DisableHooks, req.Force = s.steer.upgradeDisableHooks, s.steer.upgradeForce
	if d := s.steer.upgradeDescription; d != "" {
		req.Description = d
	}
	return s.e.helm.Upgrade(ctx, req)
}

// succeeded: status.release names the new revision, the failure count and
// any terminal error are cleared, Event and Released True
// UpgradeSucceeded, Remediated dropped.
func (u upgrade) succeeded(s *step, out outcome) {
	s.releasedDesired(u, out, api.ReasonUpgradeSucceeded)
	s.planApplied()
}

// failed: a missing namespace or CRD, or RBAC, before Helm stored anything
// is backed off and retried (MissingDependency, Forbidden); values the
// chart rejects before Helm stored anything are a terminal ChartError until
// they change; an upgrade Helm stored as failed
// counts toward remediation (rolled back next): Event and Released False
// UpgradeFailed.
func (u upgrade) failed(s *step, out outcome, err error) bool {
	if s.crdRefused(u, out, err) || s.dependencyMissing(u, out, err) || s.chartRejected(u, out, err) {
		return false
	}
	s.recordRevision(u, out)
	return s.failure(u, out, err, api.ReasonUpgradeFailed, true)
}
