package release

import (
	"errors"
	"strings"
	"testing"
	"time"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func defaultPolicy() watches.Policy {
	return watches.Policy{
		MaxHistory: 10, Retries: 2, BackoffInitial: 10 * time.Second, BackoffMax: time.Minute,
		UpgradeStrategy: watches.StrategyRollback, Wait: true, ReadinessTimeout: 5 * time.Minute,
		DriftMode: watches.DriftCorrect, UninstallWait: true, UninstallTimeout: time.Minute, Timeout: 5 * time.Minute,
	}
}

func rev(v int, st helmrelease.Status, digest string) *Revision {
	return &Revision{Version: v, Status: st, Digest: digest}
}

func TestDecide(t *testing.T) {
	const want, old = "want", "old"
	base := func() Observation {
		return Observation{Now: t0, DesiredDigest: want, Ready: true, ReleasedAt: t0.Add(-time.Minute)}
	}
	tests := []struct {
		name   string
		mod    func(*Observation)
		policy func(*watches.Policy)
		want   Decision
	}{
		{"absent installs", func(o *Observation) {}, nil,
			Decision{State: StateAbsent, Action: ActionInstall}},
		{"absent in backoff waits", func(o *Observation) {
			o.Failures, o.FailedDigest, o.LastFailure = 1, want, t0.Add(-4*time.Second)
		}, nil, Decision{State: StateAbsent, RequeueAfter: 6 * time.Second, Reason: api.ReasonBackoff}},
		{"absent after backoff installs again", func(o *Observation) {
			o.Failures, o.FailedDigest, o.LastFailure = 2, want, t0.Add(-21*time.Second)
		}, nil, Decision{State: StateAbsent, Action: ActionInstall}},
		{"absent with retries spent stalls", func(o *Observation) {
			o.Failures, o.FailedDigest, o.LastFailure = 3, want, t0.Add(-time.Hour)
		}, nil, Decision{State: StateStalled, Reason: api.ReasonRetriesExhausted}},
		{"a new digest resets the retry count", func(o *Observation) {
			o.Failures, o.FailedDigest, o.LastFailure = 9, old, t0
		}, nil, Decision{State: StateAbsent, Action: ActionInstall}},
		{"invalid values stall without acting", func(o *Observation) {
			o.ValuesError = errors.New("replicas: must be >= 1")
			o.Latest = rev(1, helmrelease.StatusDeployed, old)
		}, nil, Decision{State: StateStalled, Reason: api.ReasonInvalidValues}},
		{"a missing valuesFrom source waits, the release left as it is", func(o *Observation) {
			o.ValuesError = &ValuesSourceError{Reason: api.ReasonValuesSourceMissing, Problems: []string{`Secret ns/db not found (key "password")`}}
			o.Latest = rev(1, helmrelease.StatusDeployed, old)
		}, nil, Decision{State: StateWaiting, Reason: api.ReasonValuesSourceMissing}},
		{"an unreadable valuesFrom source waits, Forbidden", func(o *Observation) {
			o.ValuesError = &ValuesSourceError{Reason: api.ReasonForbidden, Problems: []string{"Secret ns/db cannot be read"}}
		}, nil, Decision{State: StateWaiting, Reason: api.ReasonForbidden}},
		{"a deleted resource is uninstalled whatever its values", func(o *Observation) {
			o.Deleting, o.Latest = true, rev(1, helmrelease.StatusDeployed, old)
			o.ValuesError = &ValuesSourceError{Reason: api.ReasonValuesSourceMissing, Problems: []string{"Secret ns/db not found"}}
		}, nil, Decision{State: StateDeleting, Action: ActionUninstall}},
		{"a refused CRD upgrade stalls with its own reason", func(o *Observation) {
			o.ValuesError = &ChartError{Err: errors.New("CRD x: breaks"), Reason: api.ReasonCRDUpgradeRefused}
			o.Latest = rev(2, helmrelease.StatusDeployed, old)
		}, nil, Decision{State: StateStalled, Reason: api.ReasonCRDUpgradeRefused}},
		{"pending install is unlocked", func(o *Observation) { o.Latest = rev(1, helmrelease.StatusPendingInstall, want) }, nil,
			Decision{State: StateLocked, Action: ActionUnlock}},
		{"pending upgrade is unlocked", func(o *Observation) { o.Latest = rev(3, helmrelease.StatusPendingUpgrade, want) }, nil,
			Decision{State: StateLocked, Action: ActionUnlock}},
		{"pending rollback is unlocked", func(o *Observation) { o.Latest = rev(4, helmrelease.StatusPendingRollback, old) }, nil,
			Decision{State: StateLocked, Action: ActionUnlock}},
		{"pending older than the timeout is unlocked", func(o *Observation) {
			o.Latest, o.PendingSince = rev(3, helmrelease.StatusPendingUpgrade, want), t0.Add(-5*time.Minute)
		}, nil, Decision{State: StateLocked, Action: ActionUnlock, Reason: api.ReasonPending}},
		{"pending younger than the timeout waits for it", func(o *Observation) {
			o.Latest, o.PendingSince = rev(3, helmrelease.StatusPendingUpgrade, want), t0.Add(-time.Minute)
		}, nil, Decision{State: StateLocked, RequeueAfter: 4 * time.Minute, Reason: api.ReasonPending}},
		{"pending install younger than a short timeout waits for it", func(o *Observation) {
			o.Latest, o.PendingSince = rev(1, helmrelease.StatusPendingInstall, want), t0.Add(-4*time.Second)
		}, func(p *watches.Policy) { p.Timeout = 10 * time.Second },
			Decision{State: StateLocked, RequeueAfter: 6 * time.Second, Reason: api.ReasonPending}},
		{"pending held by a running action of ours waits, however old", func(o *Observation) {
			o.Latest, o.PendingSince, o.ActionRunning = rev(2, helmrelease.StatusPendingRollback, old), t0.Add(-time.Hour), true
		}, nil, Decision{State: StateLocked, RequeueAfter: pendingRequeue, Reason: api.ReasonPending}},
		{"pending of unknown age is unlocked", func(o *Observation) {
			o.Latest = rev(2, helmrelease.StatusPendingUpgrade, want)
		}, nil, Decision{State: StateLocked, Action: ActionUnlock, Reason: api.ReasonPending}},
		{"interrupted uninstall is finished first", func(o *Observation) { o.Latest = rev(2, helmrelease.StatusUninstalling, want) }, nil,
			Decision{State: StateFailed, Action: ActionUninstall}},
		{"failed install is uninstalled", func(o *Observation) { o.Latest = rev(1, helmrelease.StatusFailed, want) }, nil,
			Decision{State: StateFailed, Action: ActionUninstall, Remediation: true}},
		{"failed install kept when asked", func(o *Observation) {
			o.Latest = rev(1, helmrelease.StatusFailed, want)
			o.Failures, o.FailedDigest = 1, want
		}, func(p *watches.Policy) { p.KeepFailedInstall = true }, Decision{State: StateStalled, Reason: api.ReasonInstallFailed}},
		{"kept failed install removed when the spec changes", func(o *Observation) {
			o.Latest = rev(1, helmrelease.StatusFailed, old)
			o.Failures, o.FailedDigest = 1, old
		}, func(p *watches.Policy) { p.KeepFailedInstall = true }, Decision{State: StateFailed, Action: ActionUninstall}},
		{"failed upgrade rolls back to the last deployed", func(o *Observation) {
			o.Latest, o.PreviousDeployed = rev(5, helmrelease.StatusFailed, want), 3
		}, nil, Decision{State: StateFailed, Action: ActionRollback, RollbackTo: 3, Remediation: true}},
		{"a remediation that keeps failing stalls", func(o *Observation) {
			o.Latest, o.PreviousDeployed = rev(5, helmrelease.StatusFailed, want), 3
			o.Failures, o.FailedDigest = 4, want
		}, nil, Decision{State: StateStalled, Reason: api.ReasonRetriesExhausted}},
		{"the last failed attempt is still remediated", func(o *Observation) {
			o.Latest, o.PreviousDeployed = rev(5, helmrelease.StatusFailed, want), 3
			o.Failures, o.FailedDigest = 3, want
		}, nil, Decision{State: StateFailed, Action: ActionRollback, RollbackTo: 3, Remediation: true}},
		// Failed rollbacks mark the deployed revision superseded and
		// maxHistory drops the rest: make chaos found such a release
		// uninstalled as if its install had failed.
		{"failed upgrade with no deployed revision left is upgraded again, never uninstalled", func(o *Observation) {
			o.Latest = rev(8, helmrelease.StatusFailed, want)
			o.Failures, o.FailedDigest, o.LastFailure = 1, want, t0.Add(-time.Hour)
		}, nil, Decision{State: StateFailed, Action: ActionUpgrade, Remediation: true, Reason: api.ReasonUpgradeFailed}},
		{"failed upgrade with no deployed revision left waits for its backoff", func(o *Observation) {
			o.Latest = rev(8, helmrelease.StatusFailed, want)
			o.Failures, o.FailedDigest, o.LastFailure = 1, want, t0.Add(-time.Second)
		}, nil, Decision{State: StateFailed, RequeueAfter: 9 * time.Second, Reason: api.ReasonBackoff}},
		{"unready upgrade with no deployed revision left stalls, never uninstalled", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt = rev(8, helmrelease.StatusDeployed, want), false, t0.Add(-6*time.Minute)
		}, func(p *watches.Policy) { p.RemediateInstall = true },
			Decision{State: StateStalled, CountFailure: true, Reason: api.ReasonReadinessTimeout}},
		{"failed upgrade uninstalls with that strategy", func(o *Observation) {
			o.Latest, o.PreviousDeployed = rev(5, helmrelease.StatusFailed, want), 3
		}, func(p *watches.Policy) { p.UpgradeStrategy = watches.StrategyUninstall }, Decision{State: StateFailed, Action: ActionUninstall, Remediation: true}},
		{"failed rollback is never rolled back: upgrade is retried", func(o *Observation) {
			o.Latest, o.PreviousDeployed = &Revision{Version: 6, Status: helmrelease.StatusFailed, Digest: old, IsRollback: true}, 3
			o.Failures, o.FailedDigest, o.LastFailure = 1, want, t0.Add(-time.Hour)
		}, nil, Decision{State: StateFailed, Action: ActionUpgrade}},
		{"failed rollback with retries spent stalls", func(o *Observation) {
			o.Latest, o.PreviousDeployed = &Revision{Version: 6, Status: helmrelease.StatusFailed, Digest: old, IsRollback: true}, 3
			o.Failures, o.FailedDigest = 3, want
		}, nil, Decision{State: StateStalled, Reason: api.ReasonRetriesExhausted}},
		{"changed digest upgrades", func(o *Observation) { o.Latest = rev(2, helmrelease.StatusDeployed, old) }, nil,
			Decision{State: StateOutOfSync, Action: ActionUpgrade}},
		{"a revision changed outside chartkeeper is upgraded back, naming it", func(o *Observation) {
			o.Latest, o.OutOfBand = rev(2, helmrelease.StatusDeployed, ""), `revision 2 was made outside chartkeeper ("Upgrade complete")`
		}, nil, Decision{State: StateOutOfSync, Action: ActionUpgrade, Reason: api.ReasonChangedOutside}},
		{"a revision changed outside chartkeeper waits out a backoff", func(o *Observation) {
			o.Latest, o.OutOfBand = rev(4, helmrelease.StatusDeployed, ""), "revision 4 was made outside chartkeeper"
			o.Failures, o.FailedDigest, o.LastFailure = 2, want, t0.Add(-5*time.Second)
		}, nil, Decision{State: StateOutOfSync, RequeueAfter: 15 * time.Second, Reason: api.ReasonBackoff}},
		{"rolled back after failure waits for backoff", func(o *Observation) {
			o.Latest = rev(4, helmrelease.StatusDeployed, old)
			o.Failures, o.FailedDigest, o.LastFailure = 2, want, t0.Add(-5*time.Second)
		}, nil, Decision{State: StateOutOfSync, RequeueAfter: 15 * time.Second, Reason: api.ReasonBackoff}},
		{"rolled back with retries spent stalls: no loop", func(o *Observation) {
			o.Latest = rev(8, helmrelease.StatusDeployed, old)
			o.Failures, o.FailedDigest, o.LastFailure = 3, want, t0.Add(-time.Hour)
		}, nil, Decision{State: StateStalled, Reason: api.ReasonRetriesExhausted}},
		{"drift is corrected", func(o *Observation) {
			o.Latest, o.Drift = rev(2, helmrelease.StatusDeployed, want), []Drift{{Object: object{Namespace: "ns", Name: "web"}, Change: DriftDeleted}}
		}, nil, Decision{State: StateDrifted, Action: ActionCorrectDrift}},
		{"drift left alone when correction is off", func(o *Observation) {
			o.Latest, o.Drift = rev(2, helmrelease.StatusDeployed, want), []Drift{{Object: object{Name: "x"}, Change: DriftEdited}}
		}, func(p *watches.Policy) { p.DriftMode = watches.DriftDisabled }, Decision{State: StateInSync}},
		{"drift only reported in warn mode: still in sync", func(o *Observation) {
			o.Latest, o.Drift = rev(2, helmrelease.StatusDeployed, want), []Drift{{Object: object{Name: "x"}, Change: DriftEdited}}
		}, func(p *watches.Policy) { p.DriftMode = watches.DriftWarn }, Decision{State: StateInSync}},
		{"the resource's warn overrides the watch's correct", func(o *Observation) {
			o.Latest, o.Drift, o.DriftMode = rev(2, helmrelease.StatusDeployed, want), []Drift{{Object: object{Name: "x"}, Change: DriftEdited}}, watches.DriftWarn
		}, nil, Decision{State: StateInSync}},
		{"the resource's correct overrides the watch's warn", func(o *Observation) {
			o.Latest, o.Drift, o.DriftMode = rev(2, helmrelease.StatusDeployed, want), []Drift{{Object: object{Name: "x"}, Change: DriftEdited}}, watches.DriftCorrect
		}, func(p *watches.Policy) { p.DriftMode = watches.DriftWarn }, Decision{State: StateDrifted, Action: ActionCorrectDrift}},
		{"unready waits until the timeout", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt = rev(2, helmrelease.StatusDeployed, want), false, t0.Add(-time.Minute)
		}, nil, Decision{State: StateUnready, RequeueAfter: 4 * time.Minute}},
		{"unready without wait just reports", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt = rev(2, helmrelease.StatusDeployed, want), false, t0.Add(-time.Hour)
		}, func(p *watches.Policy) { p.Wait = false }, Decision{State: StateUnready}},
		{"unready past the timeout rolls back", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt, o.PreviousDeployed = rev(2, helmrelease.StatusDeployed, want), false, t0.Add(-6*time.Minute), 1
		}, nil, Decision{State: StateUnready, Action: ActionRollback, RollbackTo: 1, Remediation: true, CountFailure: true, Reason: api.ReasonReadinessTimeout}},
		{"unready first install past the timeout keeps waiting", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt = rev(1, helmrelease.StatusDeployed, want), false, t0.Add(-6*time.Minute)
		}, nil, Decision{State: StateUnready, Reason: api.ReasonReadinessTimeout}},
		{"unready first install long past the timeout still waits, never stalls", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt = rev(1, helmrelease.StatusDeployed, want), false, t0.Add(-6*time.Hour)
			o.Failures, o.FailedDigest, o.LastFailure = 1, want, t0.Add(-time.Second)
		}, nil, Decision{State: StateUnready, Reason: api.ReasonReadinessTimeout}},
		{"unready reinstall after a remediated install keeps waiting", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt = rev(1, helmrelease.StatusDeployed, want), false, t0.Add(-6*time.Minute)
			o.Failures, o.FailedDigest, o.LastFailure = 1, want, t0.Add(-time.Hour)
		}, nil, Decision{State: StateUnready, Reason: api.ReasonReadinessTimeout}},
		{"unready first install within the timeout waits", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt = rev(1, helmrelease.StatusDeployed, want), false, t0.Add(-time.Minute)
		}, nil, Decision{State: StateUnready, RequeueAfter: 4 * time.Minute}},
		{"unready install past the timeout is uninstalled when the watch asks", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt = rev(1, helmrelease.StatusDeployed, want), false, t0.Add(-6*time.Minute)
		}, func(p *watches.Policy) { p.RemediateInstall = true },
			Decision{State: StateUnready, Action: ActionUninstall, Remediation: true, CountFailure: true, Reason: api.ReasonReadinessTimeout}},
		{"unready upgrade past the timeout rolls back whatever remediateInstall says", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt, o.PreviousDeployed = rev(2, helmrelease.StatusDeployed, want), false, t0.Add(-6*time.Minute), 1
		}, func(p *watches.Policy) { p.RemediateInstall = false },
			Decision{State: StateUnready, Action: ActionRollback, RollbackTo: 1, Remediation: true, CountFailure: true, Reason: api.ReasonReadinessTimeout}},
		{"unready rollback past the timeout stalls: no rollback of a rollback", func(o *Observation) {
			o.Latest = &Revision{Version: 3, Status: helmrelease.StatusDeployed, Digest: want, IsRollback: true}
			o.Ready, o.ReleasedAt, o.PreviousDeployed = false, t0.Add(-6*time.Minute), 1
		}, nil, Decision{State: StateStalled, CountFailure: true, Reason: api.ReasonReadinessTimeout}},
		{"readiness timeout counted once", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt, o.PreviousDeployed = rev(2, helmrelease.StatusDeployed, want), false, t0.Add(-6*time.Minute), 1
			o.Failures, o.FailedDigest, o.LastFailure = 1, want, t0.Add(-time.Second)
		}, nil, Decision{State: StateStalled, Reason: api.ReasonReadinessTimeout}},
		{"a timeout with maxInFlight remediations in flight is deferred, not counted", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt, o.PreviousDeployed = rev(2, helmrelease.StatusDeployed, want), false, t0.Add(-6*time.Minute), 1
			o.RemediationsInFlight = 3
		}, func(p *watches.Policy) { p.MaxInFlight = 3 },
			Decision{State: StateUnready, Reason: api.ReasonReadinessTimeout, RequeueAfter: deferredRequeue}},
		{"a timeout below maxInFlight is rolled back", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt, o.PreviousDeployed = rev(2, helmrelease.StatusDeployed, want), false, t0.Add(-6*time.Minute), 1
			o.RemediationsInFlight = 2
		}, func(p *watches.Policy) { p.MaxInFlight = 3 },
			Decision{State: StateUnready, Action: ActionRollback, RollbackTo: 1, Remediation: true, CountFailure: true, Reason: api.ReasonReadinessTimeout}},
		{"maxInFlight 0 bounds nothing", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt, o.PreviousDeployed = rev(2, helmrelease.StatusDeployed, want), false, t0.Add(-6*time.Minute), 1
			o.RemediationsInFlight = 500
		}, func(p *watches.Policy) { p.MaxInFlight = 0 },
			Decision{State: StateUnready, Action: ActionRollback, RollbackTo: 1, Remediation: true, CountFailure: true, Reason: api.ReasonReadinessTimeout}},
		{"a failed object is remediated whatever is in flight", func(o *Observation) {
			o.Latest, o.Ready, o.ReadyFailed, o.ReleasedAt, o.PreviousDeployed = rev(2, helmrelease.StatusDeployed, want), false, true, t0.Add(-10*time.Second), 1
			o.RemediationsInFlight = 3
		}, func(p *watches.Policy) { p.MaxInFlight = 3 },
			Decision{State: StateUnready, Action: ActionRollback, RollbackTo: 1, Remediation: true, CountFailure: true, Reason: api.ReasonReadinessFailed}},
		{"a rollback timing out stalls with maxInFlight reached: nothing to defer", func(o *Observation) {
			o.Latest = &Revision{Version: 3, Status: helmrelease.StatusDeployed, Digest: want, IsRollback: true}
			o.Ready, o.ReleasedAt, o.PreviousDeployed, o.RemediationsInFlight = false, t0.Add(-6*time.Minute), 1, 3
		}, func(p *watches.Policy) { p.MaxInFlight = 3 }, Decision{State: StateStalled, CountFailure: true, Reason: api.ReasonReadinessTimeout}},
		{"a first install timing out is waited for, as without maxInFlight", func(o *Observation) {
			o.Latest, o.Ready, o.ReleasedAt, o.RemediationsInFlight = rev(1, helmrelease.StatusDeployed, want), false, t0.Add(-6*time.Minute), 3
		}, func(p *watches.Policy) { p.MaxInFlight = 3 }, Decision{State: StateUnready, Reason: api.ReasonReadinessTimeout}},
		{"a failed object ends an upgrade's wait before the timeout: rolled back", func(o *Observation) {
			o.Latest, o.Ready, o.ReadyFailed, o.ReleasedAt, o.PreviousDeployed = rev(2, helmrelease.StatusDeployed, want), false, true, t0.Add(-10*time.Second), 1
		}, nil, Decision{State: StateUnready, Action: ActionRollback, RollbackTo: 1, Remediation: true, CountFailure: true, Reason: api.ReasonReadinessFailed}},
		{"a readiness expression cut at its deadline: said so, still waited for", func(o *Observation) {
			o.Latest, o.Ready, o.ExpressionTimedOut, o.ReleasedAt, o.PreviousDeployed = rev(2, helmrelease.StatusDeployed, want), false, true, t0.Add(-10*time.Second), 1
		}, nil, Decision{State: StateUnready, RequeueAfter: 4*time.Minute + 50*time.Second, Reason: api.ReasonReadinessExpressionTimeout}},
		{"a readiness expression cut at its deadline until the timeout: remediated as any timeout", func(o *Observation) {
			o.Latest, o.Ready, o.ExpressionTimedOut, o.ReleasedAt, o.PreviousDeployed = rev(2, helmrelease.StatusDeployed, want), false, true, t0.Add(-6*time.Minute), 1
		}, nil, Decision{State: StateUnready, Action: ActionRollback, RollbackTo: 1, Remediation: true, CountFailure: true, Reason: api.ReasonReadinessTimeout}},
		{"a failed object in a first install: reported, still waited for", func(o *Observation) {
			o.Latest, o.Ready, o.ReadyFailed, o.ReleasedAt = rev(1, helmrelease.StatusDeployed, want), false, true, t0.Add(-10*time.Second)
		}, nil, Decision{State: StateUnready, Reason: api.ReasonReadinessFailed}},
		{"a failed object in a first install is uninstalled when the watch asks", func(o *Observation) {
			o.Latest, o.Ready, o.ReadyFailed, o.ReleasedAt = rev(1, helmrelease.StatusDeployed, want), false, true, t0.Add(-10*time.Second)
		}, func(p *watches.Policy) { p.RemediateInstall = true },
			Decision{State: StateUnready, Action: ActionUninstall, Remediation: true, CountFailure: true, Reason: api.ReasonReadinessFailed}},
		{"a failed object after the rollback stalls: no rollback of a rollback", func(o *Observation) {
			o.Latest = &Revision{Version: 3, Status: helmrelease.StatusDeployed, Digest: want, IsRollback: true}
			o.Ready, o.ReadyFailed, o.ReleasedAt, o.PreviousDeployed = false, true, t0.Add(-10*time.Second), 1
		}, nil, Decision{State: StateStalled, CountFailure: true, Reason: api.ReasonReadinessFailed}},
		{"a failed object without wait is only reported", func(o *Observation) {
			o.Latest, o.Ready, o.ReadyFailed, o.ReleasedAt, o.PreviousDeployed = rev(2, helmrelease.StatusDeployed, want), false, true, t0.Add(-10*time.Second), 1
		}, func(p *watches.Policy) { p.Wait = false }, Decision{State: StateUnready}},
		{"a failure counted once", func(o *Observation) {
			o.Latest, o.Ready, o.ReadyFailed, o.ReleasedAt, o.PreviousDeployed = rev(2, helmrelease.StatusDeployed, want), false, true, t0.Add(-10*time.Second), 1
			o.Failures, o.FailedDigest, o.LastFailure = 1, want, t0.Add(-time.Second)
		}, nil, Decision{State: StateStalled, Reason: api.ReasonReadinessFailed}},
		{"manual approval: a change is planned, not upgraded", func(o *Observation) {
			o.Latest, o.ManualApproval, o.PlanInputs = rev(1, helmrelease.StatusDeployed, old), true, "i1"
		}, nil, Decision{State: StateAwaitingApproval, Action: ActionPlan, Reason: api.ReasonAwaitingApproval}},
		{"manual approval: a planned change waits", func(o *Observation) {
			o.Latest, o.ManualApproval, o.PlanInputs, o.Planned = rev(1, helmrelease.StatusDeployed, old), true, "i1", "i1p1"
		}, nil, Decision{State: StateAwaitingApproval, Reason: api.ReasonAwaitingApproval}},
		{"manual approval: a plan made for other values is made again, whatever approves it", func(o *Observation) {
			o.Latest, o.ManualApproval, o.PlanInputs, o.Planned, o.Approved = rev(1, helmrelease.StatusDeployed, old), true, "i2", "", "i1p1"
		}, nil, Decision{State: StateAwaitingApproval, Action: ActionPlan, Reason: api.ReasonAwaitingApproval}},
		{"manual approval: an approval of another plan is refused", func(o *Observation) {
			o.Latest, o.ManualApproval, o.PlanInputs, o.Planned, o.Approved = rev(1, helmrelease.StatusDeployed, old), true, "i2", "i2p2", "i1p1"
		}, nil, Decision{State: StateAwaitingApproval, Reason: api.ReasonApprovalStale}},
		{"manual approval: the approved plan upgrades", func(o *Observation) {
			o.Latest, o.ManualApproval, o.PlanInputs, o.Planned, o.Approved = rev(1, helmrelease.StatusDeployed, old), true, "i1", "i1p1", "i1p1"
		}, nil, Decision{State: StateOutOfSync, Action: ActionUpgrade, Reason: api.ReasonProgressing}},
		{"manual approval: a failed upgrade's retry is not held", func(o *Observation) {
			o.Latest, o.ManualApproval, o.PlanInputs = &Revision{Version: 3, Status: helmrelease.StatusFailed, Digest: old, IsRollback: true}, true, "i1"
		}, nil, Decision{State: StateFailed, Action: ActionUpgrade, Reason: api.ReasonProgressing}},
		{"manual approval: in sync, nothing to approve", func(o *Observation) {
			o.Latest, o.ManualApproval, o.PlanInputs = rev(2, helmrelease.StatusDeployed, want), true, "i1"
		}, nil, Decision{State: StateInSync}},
		{"in sync does nothing", func(o *Observation) { o.Latest = rev(2, helmrelease.StatusDeployed, want) }, nil,
			Decision{State: StateInSync}},
		{"a ready revision is tested when the watch runs tests", func(o *Observation) { o.Latest = rev(2, helmrelease.StatusDeployed, want) }, tests(watches.TestRemediate),
			Decision{State: StateUntested, Action: ActionTest, Reason: api.ReasonProgressing}},
		{"an unready revision is not tested yet", func(o *Observation) {
			o.Latest, o.Ready = rev(2, helmrelease.StatusDeployed, want), false
		}, tests(watches.TestRemediate), Decision{State: StateUnready, RequeueAfter: 4 * time.Minute}},
		{"drift is corrected before the tests run", func(o *Observation) {
			o.Latest, o.Drift = rev(2, helmrelease.StatusDeployed, want), []Drift{{Object: object{Name: "x"}, Change: DriftDeleted}}
		}, tests(watches.TestRemediate), Decision{State: StateDrifted, Action: ActionCorrectDrift}},
		{"a revision that passed its tests is in sync", func(o *Observation) {
			o.Latest, o.Tested = rev(2, helmrelease.StatusDeployed, want), &api.TestStatus{Revision: 2, Result: api.TestSucceeded}
		}, tests(watches.TestRemediate), Decision{State: StateInSync, Reason: api.ReasonSucceeded}},
		{"an upgrade that failed its tests is rolled back, already counted", func(o *Observation) {
			o.Latest, o.PreviousDeployed, o.Tested = rev(2, helmrelease.StatusDeployed, want), 1, failedTest(2)
		}, tests(watches.TestRemediate), Decision{State: StateTestFailed, Action: ActionRollback, RollbackTo: 1, Remediation: true, Reason: api.ReasonTestFailed}},
		{"an upgrade that failed its tests is uninstalled with that strategy", func(o *Observation) {
			o.Latest, o.PreviousDeployed, o.Tested = rev(2, helmrelease.StatusDeployed, want), 1, failedTest(2)
		}, func(p *watches.Policy) {
			tests(watches.TestRemediate)(p)
			p.UpgradeStrategy = watches.StrategyUninstall
		}, Decision{State: StateTestFailed, Action: ActionUninstall, Remediation: true, Reason: api.ReasonTestFailed}},
		{"a first install that failed its tests is kept: stalled", func(o *Observation) {
			o.Latest, o.Tested = rev(1, helmrelease.StatusDeployed, want), failedTest(1)
		}, tests(watches.TestRemediate), Decision{State: StateStalled, Reason: api.ReasonTestFailed}},
		{"a first install that failed its tests is uninstalled when the watch asks", func(o *Observation) {
			o.Latest, o.Tested = rev(1, helmrelease.StatusDeployed, want), failedTest(1)
		}, func(p *watches.Policy) {
			tests(watches.TestRemediate)(p)
			p.RemediateInstall = true
		}, Decision{State: StateTestFailed, Action: ActionUninstall, Remediation: true, Reason: api.ReasonTestFailed}},
		{"a rollback that failed its tests stalls: no rollback of a rollback", func(o *Observation) {
			o.Latest = &Revision{Version: 3, Status: helmrelease.StatusDeployed, Digest: want, IsRollback: true}
			o.PreviousDeployed, o.Tested = 1, failedTest(3)
		}, tests(watches.TestRemediate), Decision{State: StateStalled, Reason: api.ReasonTestFailed}},
		{"a failed test only reported: in sync", func(o *Observation) {
			o.Latest, o.PreviousDeployed, o.Tested = rev(2, helmrelease.StatusDeployed, want), 1, failedTest(2)
		}, tests(watches.TestReport), Decision{State: StateInSync, Reason: api.ReasonSucceeded}},
		{"a reconcile request tests a failed revision again", func(o *Observation) {
			o.Latest, o.PreviousDeployed, o.Tested, o.ReconcileRequest = rev(2, helmrelease.StatusDeployed, want), 1, failedTest(2), "now"
		}, tests(watches.TestRemediate), Decision{State: StateUntested, Action: ActionTest}},
		{"tests the operator may not run wait out their backoff, saying so", func(o *Observation) {
			o.Latest = rev(2, helmrelease.StatusDeployed, want)
			o.Backoff = Backoff{Of: "Test", Failures: 1, Digest: want, Until: t0.Add(4 * time.Second), Reason: api.ReasonForbidden}
		}, tests(watches.TestRemediate), Decision{State: StateUntested, RequeueAfter: 4 * time.Second, Reason: api.ReasonForbidden}},
		{"a failed test recorded while tests are off is not acted on", func(o *Observation) {
			o.Latest, o.PreviousDeployed, o.Tested = rev(2, helmrelease.StatusDeployed, want), 1, failedTest(2)
		}, nil, Decision{State: StateInSync}},
		{"deleting uninstalls", func(o *Observation) {
			o.Deleting, o.Latest = true, rev(2, helmrelease.StatusPendingUpgrade, want)
		}, nil, Decision{State: StateDeleting, Action: ActionUninstall}},
		{"deleting waits for objects", func(o *Observation) {
			o.Deleting, o.ObjectsRemaining, o.DeletingSince = true, 2, t0.Add(-10*time.Second)
		}, nil, Decision{State: StateDeleting, RequeueAfter: deleteRequeue}},
		{"deleting gives up waiting after the timeout", func(o *Observation) {
			o.Deleting, o.ObjectsRemaining, o.DeletingSince = true, 2, t0.Add(-2*time.Minute)
		}, nil, Decision{State: StateDeleting, Finished: true}},
		{"leftovers of an earlier revision are pruned", func(o *Observation) {
			o.Latest = rev(3, helmrelease.StatusDeployed, want)
			o.Leftovers = []object{{Namespace: "ns", Name: "web-extra-7"}}
			o.Drift = []Drift{{Object: object{Namespace: "ns", Name: "web-config"}, Change: DriftEdited}}
		}, nil, Decision{State: StateLeftovers, Action: ActionPrune}},
		{"deleting finishes when all is gone", func(o *Observation) { o.Deleting = true }, nil,
			Decision{State: StateDeleting, Finished: true}},
		{"a release another resource owns is refused, and looked at again", func(o *Observation) {
			o.Owner = ReleaseOwner{Release: "ns/db", By: "App ns/db"}
		}, nil, Decision{State: StateStalled, RequeueAfter: ownerRecheck, Reason: api.ReasonReleaseOwnedByAnother}},
		{"a release made outside chartkeeper is refused", func(o *Observation) {
			o.Owner = ReleaseOwner{Release: "ns/db", Foreign: true}
		}, nil, Decision{State: StateStalled, RequeueAfter: ownerRecheck, Reason: api.ReasonReleaseOwnedByAnother}},
		{"refused whatever the failure bookkeeping says", func(o *Observation) {
			o.Owner = ReleaseOwner{Release: "ns/db", By: "App ns/db"}
			o.Failures, o.FailedDigest, o.LastFailure = 1, want, t0.Add(-time.Second)
		}, nil, Decision{State: StateStalled, RequeueAfter: ownerRecheck, Reason: api.ReasonReleaseOwnedByAnother}},
		{"deleting a refused resource never uninstalls the other's release", func(o *Observation) {
			o.Deleting, o.Owner = true, ReleaseOwner{Release: "ns/db", By: "App ns/db"}
		}, nil, Decision{State: StateDeleting, Finished: true, Reason: api.ReasonReleaseOwnedByAnother}},
		{"deleting a resource refused a hand-made release leaves it", func(o *Observation) {
			o.Deleting, o.Owner = true, ReleaseOwner{Release: "ns/db", Foreign: true}
		}, nil, Decision{State: StateDeleting, Finished: true, Reason: api.ReasonReleaseOwnedByAnother}},
		{"a predecessor's release is taken over in place", func(o *Observation) {
			o.Owner, o.Latest = ReleaseOwner{Predecessor: true}, rev(2, helmrelease.StatusDeployed, "")
		}, nil, Decision{State: StateInherited, Action: ActionTakeOver, Reason: api.ReasonProgressing}},
		{"a predecessor's failed revision is taken over as it is", func(o *Observation) {
			o.Owner, o.Latest = ReleaseOwner{Predecessor: true}, rev(3, helmrelease.StatusFailed, "")
		}, nil, Decision{State: StateInherited, Action: ActionTakeOver, Reason: api.ReasonProgressing}},
		{"a predecessor's pending revision is waited for, then unlocked, before a takeover", func(o *Observation) {
			o.Owner, o.Latest = ReleaseOwner{Predecessor: true}, rev(2, helmrelease.StatusPendingUpgrade, "")
		}, nil, Decision{State: StateLocked, Action: ActionUnlock, Reason: api.ReasonPending}},
		{"a predecessor's revision naming objects outside the scope is forged, not taken over", func(o *Observation) {
			o.Owner, o.Latest = ReleaseOwner{Predecessor: true}, nil
			o.Forged = "revision 2 of release ns/web carries no chartkeeper signature and names Secret other/x"
		}, nil, Decision{State: StateStalled, RequeueAfter: ownerRecheck, Reason: api.ReasonReleaseForged}},
		{"deleting a resource uninstalls its predecessor's release without a takeover", func(o *Observation) {
			o.Deleting, o.Owner, o.Latest = true, ReleaseOwner{Predecessor: true}, rev(2, helmrelease.StatusDeployed, "")
		}, nil, Decision{State: StateDeleting, Action: ActionUninstall, Reason: api.ReasonDeleting}},
		{"a forged revision stalls the release, and is looked at again", func(o *Observation) {
			o.Latest, o.Forged = nil, "revision 2 of release ns/web was not written by chartkeeper"
		}, nil, Decision{State: StateStalled, RequeueAfter: ownerRecheck, Reason: api.ReasonReleaseForged}},
		{"forged: nothing is remediated, whatever the failure bookkeeping says", func(o *Observation) {
			o.Latest, o.Forged = nil, "revision 2 of release ns/web was not written by chartkeeper"
			o.Failures, o.FailedDigest, o.LastFailure = 1, want, t0.Add(-time.Second)
		}, nil, Decision{State: StateStalled, RequeueAfter: ownerRecheck, Reason: api.ReasonReleaseForged}},
		{"deleting a resource whose release is forged lets it go without an uninstall", func(o *Observation) {
			o.Deleting, o.Forged = true, "revision 2 of release ns/web was not written by chartkeeper"
			o.Latest = rev(2, helmrelease.StatusDeployed, want)
		}, nil, Decision{State: StateDeleting, Finished: true, Reason: api.ReasonReleaseForged}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base()
			tt.mod(&o)
			p := defaultPolicy()
			if tt.policy != nil {
				tt.policy(&p)
			}
			got := Decide(o, p)
			if got.State != tt.want.State || got.Action != tt.want.Action || got.RollbackTo != tt.want.RollbackTo ||
				got.Remediation != tt.want.Remediation || got.CountFailure != tt.want.CountFailure ||
				got.Finished != tt.want.Finished || got.RequeueAfter != tt.want.RequeueAfter {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			if tt.want.Reason != "" && got.Reason != tt.want.Reason {
				t.Errorf("reason %q, want %q (%s)", got.Reason, tt.want.Reason, got.Message)
			}
			if got.Message == "" {
				t.Error("every decision explains itself")
			}
		})
	}
}

// tests turns the watch's chart tests on, with onFailure.
func tests(onFailure watches.TestOnFailure) func(*watches.Policy) {
	return func(p *watches.Policy) {
		p.Test = watches.TestPolicy{Enable: true, Timeout: time.Minute, OnFailure: onFailure}
	}
}

// failedTest is what status.test says of a revision whose tests failed.
func failedTest(revision int) *api.TestStatus {
	return &api.TestStatus{Revision: revision, Result: api.TestFailed, Message: "test Pod ns/web-test-connection failed: phase Failed"}
}

// A decision taken because attempts failed says why the last one failed,
// for the digest it was counted for only: a resource that stopped
// retrying still explains itself.
func TestFailureDecisionsNameTheLastFailure(t *testing.T) {
	const why = `Upgrade failed: Service "web" is invalid: spec.ports[0].port: Invalid value: 70000`
	failed := func(o *Observation) {
		o.Latest, o.PreviousDeployed = rev(2, helmrelease.StatusFailed, "want"), 1
	}
	for name, tc := range map[string]struct {
		mod     func(*Observation)
		mention bool
	}{
		"stalled, retries spent":    {func(o *Observation) { o.Failures = 3 }, true},
		"in backoff":                {func(o *Observation) { o.Failures, o.LastFailure = 1, t0 }, true},
		"failed upgrade rolls back": {func(o *Observation) { o.Failures = 1; failed(o) }, true},
		"failed install uninstalls": {func(o *Observation) {
			o.Failures, o.Latest = 1, rev(1, helmrelease.StatusFailed, "want")
		}, true},
		"another digest's failure": {func(o *Observation) { o.Failures, o.FailedDigest = 3, "old" }, false},
	} {
		o := Observation{Now: t0, DesiredDigest: "want", FailedDigest: "want", LastFailureMessage: why, Ready: true}
		tc.mod(&o)
		got := Decide(o, defaultPolicy())
		if mentioned := strings.Contains(got.Message, "last failure: "+why); mentioned != tc.mention {
			t.Errorf("%s: %s: %q names the last failure: %v, want %v", name, got.State, got.Message, mentioned, tc.mention)
		}
	}
}

func TestBackoffDoublesToMax(t *testing.T) {
	p := defaultPolicy()
	for failures, want := range map[int]time.Duration{0: 0, 1: 10 * time.Second, 2: 20 * time.Second, 3: 40 * time.Second, 4: time.Minute, 10: time.Minute} {
		if got := p.Backoff(failures); got != want {
			t.Errorf("Backoff(%d) = %s, want %s", failures, got, want)
		}
	}
}
