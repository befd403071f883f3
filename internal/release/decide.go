package release

import (
	"errors"
	"fmt"
	"time"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// Decide classifies an observation into a State and chooses at most one
// action. It is a pure function of its inputs. What failed is not run
// again before its backoff has passed (backoffGate).
func Decide(o Observation, p policyOf) Decision {
	return backoffGate(o, decide(o, p))
}

func decide(o Observation, p policyOf) Decision {
	if o.Deleting {
		return decideDeleting(o, p)
	}
	if o.AnnotationError != nil {
		return Decision{State: StateStalled, Reason: api.ReasonAnnotationRefused, Message: o.AnnotationError.Error()}
	}
	if o.Suspended {
		return Decision{State: StateSuspended, Reason: api.ReasonSuspended, Message: suspendedMessage}
	}
	var waiting *ValuesSourceError
	if errors.As(o.ValuesError, &waiting) {
		until := "it exists (it is watched)"
		if waiting.Reason == api.ReasonForbidden {
			until = "the operator may read it (get, list and watch)"
		}
		return Decision{State: StateWaiting, Reason: waiting.Reason, Message: fmt.Sprintf("%v; nothing is installed or upgraded until %s", o.ValuesError, until)}
	}
	if o.ValuesError != nil {
		reason := api.ReasonInvalidValues
		var ce *ChartError
		if errors.As(o.ValuesError, &ce) && ce.Reason != "" {
			reason = ce.Reason
		}
		return Decision{State: StateStalled, Reason: reason, Message: o.ValuesError.Error()}
	}
	if o.Owner.refused() {
		return Decision{State: StateStalled, Reason: api.ReasonReleaseOwnedByAnother, Message: o.Owner.message(), RequeueAfter: ownerRecheck}
	}
	if o.Forged != "" {
		return Decision{State: StateStalled, Reason: api.ReasonReleaseForged, Message: o.Forged, RequeueAfter: ownerRecheck}
	}
	if o.Latest == nil {
		if d, blocked := retryGate(o, p, StateAbsent); blocked {
			return d
		}
		return Decision{State: StateAbsent, Action: ActionInstall, Reason: api.ReasonNotReleased, Message: "no release yet"}
	}
	l := o.Latest
	switch {
	case l.Status.IsPending():
		return decidePending(o, p)
	case o.Owner.Predecessor:
		return Decision{State: StateInherited, Action: ActionTakeOver, Reason: api.ReasonProgressing, Message: inheritedMessage(l.Version)}
	case l.Status == helmrelease.StatusUninstalling || l.Status == helmrelease.StatusUninstalled || l.Status == helmrelease.StatusUnknown:
		// An interrupted uninstall, or history kept by hand: clear it, then install.
		return Decision{State: StateFailed, Action: ActionUninstall, Reason: api.ReasonNotReleased,
			Message: fmt.Sprintf("revision %d is %s; removing it before installing again", l.Version, l.Status)}
	case l.Status == helmrelease.StatusFailed && !l.IsRollback:
		return decideFailed(o, p)
	case l.Digest != o.DesiredDigest || l.Status == helmrelease.StatusFailed:
		// Out of sync, or a failed rollback: never roll a rollback back,
		// try the desired upgrade again within the retry budget.
		state := StateOutOfSync
		if l.Status == helmrelease.StatusFailed {
			state = StateFailed
		}
		if d, blocked := retryGate(o, p, state); blocked {
			return d
		}
		if o.OutOfBand != "" && state == StateOutOfSync {
			return Decision{State: state, Action: ActionUpgrade, Reason: api.ReasonChangedOutside, Message: o.OutOfBand}
		}
		if d, held := approvalGate(o); held && state == StateOutOfSync {
			return d
		}
		return Decision{State: state, Action: ActionUpgrade, Reason: api.ReasonProgressing,
			Message: fmt.Sprintf("revision %d does not match the desired chart and values", l.Version)}
	}
	// Deployed from the desired chart and values.
	if len(o.Leftovers) > 0 {
		return Decision{State: StateLeftovers, Action: ActionPrune, Reason: api.ReasonProgressing,
			Message: fmt.Sprintf("objects earlier revisions created remain: %s", listObjects(o.Leftovers, 5))}
	}
	if len(o.Drift) > 0 && driftMode(o, p) == watches.DriftCorrect {
		return Decision{State: StateDrifted, Action: ActionCorrectDrift, Reason: api.ReasonProgressing,
			Message: fmt.Sprintf("released objects changed outside Helm: %v", o.Drift)}
	}
	if !o.Ready {
		return decideUnready(o, p)
	}
	if d, gated := decideTests(o, p); gated {
		return d
	}
	return Decision{State: StateInSync, Reason: api.ReasonSucceeded, Message: inSyncMessage(o, p)}
}

// inSyncMessage says what a step found in sync: released and ready, and
// what the chart's tests found when the watch runs them.
func inSyncMessage(o Observation, p policyOf) string {
	msg := fmt.Sprintf("revision %d released and ready", o.Latest.Version)
	switch t := o.Tested; {
	case !p.Test.Enable || t == nil:
	case t.Result == api.TestSucceeded:
		msg += "; its chart tests passed"
	default:
		msg += "; its chart tests failed (test.onFailure: report): see the Tested condition"
	}
	return msg
}

// suspendedMessage says what suspension means and how to resume.
const suspendedMessage = "suspended by the annotation " + api.AnnotationSuspend + `: "true": nothing is installed, upgraded, rolled back, corrected or pruned; remove it (or set it to "false") to resume`

// pendingRequeue is how often a pending revision whose operation is ours
// and still running is looked at again.
const pendingRequeue = 5 * time.Second

// decidePending unlocks a pending revision only when it is abandoned: no
// action of ours runs on it and it is older than the action timeout (no
// operation bounded by it can still be in flight). Until then it waits.
func decidePending(o Observation, p policyOf) Decision {
	l := o.Latest
	d := Decision{State: StateLocked, Reason: api.ReasonPending}
	if o.ActionRunning {
		d.RequeueAfter = pendingRequeue
		d.Message = fmt.Sprintf("revision %d is %s: an action of this operator is running on it; waiting", l.Version, l.Status)
		return d
	}
	if !o.PendingSince.IsZero() {
		if left := o.PendingSince.Add(p.Timeout).Sub(o.Now); left > 0 {
			d.RequeueAfter = left
			d.Message = fmt.Sprintf("revision %d is %s, last written %s ago: waiting for its operation to finish (it is taken as interrupted after the %s timeout, in %s)",
				l.Version, l.Status, o.Now.Sub(o.PendingSince).Round(time.Second), p.Timeout, left.Round(time.Second))
			return d
		}
	}
	d.Action = ActionUnlock
	d.Message = fmt.Sprintf("revision %d is %s with no operation running for longer than the %s timeout: it was interrupted", l.Version, l.Status, p.Timeout)
	return d
}

func decideDeleting(o Observation, p policyOf) Decision {
	if o.Owner.refused() { // never uninstall what is not ours
		return Decision{State: StateDeleting, Finished: true, Reason: api.ReasonReleaseOwnedByAnother,
			Message: "release " + o.Owner.Release + " is not this resource's: left alone"}
	}
	if o.Forged != "" { // never act on what a forged revision names
		return Decision{State: StateDeleting, Finished: true, Reason: api.ReasonReleaseForged,
			Message: o.Forged + "; the resource is deleted without an uninstall: the stored revisions and the objects they name are left for an administrator"}
	}
	if o.Latest != nil {
		return Decision{State: StateDeleting, Action: ActionUninstall, Reason: api.ReasonDeleting, Message: "uninstalling the release",
			SkipHooks: o.SkipUninstallHooks}
	}
	if p.UninstallWait && o.ObjectsRemaining > 0 {
		if waited := o.Now.Sub(o.DeletingSince); waited < p.UninstallTimeout {
			return Decision{State: StateDeleting, RequeueAfter: deleteRequeue, Reason: api.ReasonDeleting,
				Message: fmt.Sprintf("waiting for %d released objects to be deleted", o.ObjectsRemaining)}
		}
	}
	return Decision{State: StateDeleting, Finished: true, Reason: api.ReasonUninstallSucceeded, Message: "release uninstalled"}
}

// decideFailed handles a failed install or upgrade (not a failed rollback).
func decideFailed(o Observation, p policyOf) Decision {
	l := o.Latest
	// The last failure of an attempt is still remediated; a remediation that
	// keeps failing is not tried forever.
	if n := o.failures(); n > p.Retries+1 {
		return Decision{State: StateStalled, Reason: api.ReasonRetriesExhausted,
			Message: fmt.Sprintf("revision %d failed and %d attempts to release or remediate failed; change the spec or chart to try again%s", l.Version, n, o.lastFailure())}
	}
	if o.firstInstall() { // an install that failed: nothing good to go back to
		if p.KeepFailedInstall {
			if o.FailedDigest == o.DesiredDigest {
				return Decision{State: StateStalled, Reason: api.ReasonInstallFailed,
					Message: fmt.Sprintf("install failed (revision %d kept for inspection); change the spec to try again%s", l.Version, o.lastFailure())}
			}
			return Decision{State: StateFailed, Action: ActionUninstall, Reason: api.ReasonInstallFailed,
				Message: "the spec changed since the failed install: removing it to install again"}
		}
		return Decision{State: StateFailed, Action: ActionUninstall, Remediation: true, Reason: api.ReasonInstallFailed,
			Message: fmt.Sprintf("install failed (revision %d): uninstalling it%s", l.Version, o.lastFailure())}
	}
	if p.UpgradeStrategy == "uninstall" {
		return Decision{State: StateFailed, Action: ActionUninstall, Remediation: true, Reason: api.ReasonUpgradeFailed,
			Message: fmt.Sprintf("upgrade failed (revision %d): uninstalling%s", l.Version, o.lastFailure())}
	}
	if o.PreviousDeployed == 0 {
		// maxHistory may have dropped every deployed revision (a failed
		// rollback marks the failed revision before it superseded, but
		// that one never counts: lineage.go): nothing to go back to. An upgraded release is never uninstalled
		// as a failed install is: the upgrade is tried again (from the
		// failed revision) within the retry budget.
		if d, blocked := retryGate(o, p, StateFailed); blocked {
			return d
		}
		return Decision{State: StateFailed, Action: ActionUpgrade, Remediation: true, Reason: api.ReasonUpgradeFailed,
			Message: fmt.Sprintf("upgrade failed (revision %d) and the history keeps no deployed revision to roll back to: upgrading again%s", l.Version, o.lastFailure())}
	}
	return Decision{State: StateFailed, Action: ActionRollback, RollbackTo: o.PreviousDeployed, Remediation: true,
		Reason: api.ReasonUpgradeFailed, Message: fmt.Sprintf("upgrade failed (revision %d): rolling back to revision %d%s", l.Version, o.PreviousDeployed, o.lastFailure())}
}

func decideUnready(o Observation, p policyOf) Decision {
	why := o.NotReady
	if why == "" {
		why = "waiting for the released objects to become ready"
	}
	d := Decision{State: StateUnready, Reason: api.ReasonProgressing, Message: why}
	if o.ExpressionTimedOut {
		d.Reason = api.ReasonReadinessExpressionTimeout
	}
	if !p.Wait || o.ReleasedAt.IsZero() {
		return d
	}
	if o.ReadyFailed {
		// An object failed: the wait is over, as at the timeout.
		d.Reason = api.ReasonReadinessFailed
		d.Message = "a released object failed: " + why
	} else {
		left := o.ReleasedAt.Add(p.ReadinessTimeout).Sub(o.Now)
		if left > 0 {
			d.RequeueAfter = left // only to notice the timeout; progress arrives by watch
			return d
		}
		// Timed out: a failure of this revision.
		d.Reason = api.ReasonReadinessTimeout
		d.Message = fmt.Sprintf("not ready within %s: %s", p.ReadinessTimeout, why)
	}
	if o.firstInstall() && !p.RemediateInstall {
		// A first install is waited for, not torn down: uninstalling a slow
		// one (a database) would throw its volumes away and start again.
		d.Message += "; a first install is not remediated (readiness.remediateInstall: false): still waiting"
		return d
	}
	if o.FailedDigest == o.DesiredDigest && o.LastFailure.After(o.ReleasedAt) {
		// Already counted for this revision: nothing more to do.
		d.State = StateStalled
		return d
	}
	r := remediate(d, o, p)
	if r.Action != ActionNone && !o.ReadyFailed && p.MaxInFlight > 0 && o.RemediationsInFlight >= p.MaxInFlight {
		// A timeout may be the cluster's, not the revision's: while as many
		// remediations as the watch allows are not ready yet, this release
		// waits on, uncounted, and is looked at again soon (a slot frees,
		// or it becomes ready by itself).
		d.Message += fmt.Sprintf("; remediation deferred: %d other releases of this kind are being remediated (remediation.maxInFlight)", p.MaxInFlight)
		d.RequeueAfter = deferredRequeue
		return d
	}
	r.CountFailure = true
	return r
}

// deferredRequeue is how soon a release whose remediation was deferred
// (remediation.maxInFlight) is looked at again for a free slot; its
// objects' progress wakes it sooner. Thousands may be deferred at once.
const deferredRequeue = time.Minute

// remediate sets the action that remediates a revision deployed from the
// desired digest that failed after its release (not ready in time, an
// object failed, its tests failed): a rollback to the last deployed
// revision, or an uninstall (a first install, or the uninstall strategy);
// none for a rollback, which is never rolled back (Stalled).
func remediate(d Decision, o Observation, p policyOf) Decision {
	switch {
	case o.Latest.IsRollback:
		d.State = StateStalled // never roll back a rollback
	case o.firstInstall():
		d.Action, d.Remediation = ActionUninstall, true
	case o.PreviousDeployed == 0: // an upgrade with no deployed revision left in the history
		d.State = StateStalled
		d.Message += "; the history keeps no deployed revision to roll back to: change the spec or chart"
	case p.UpgradeStrategy == watches.StrategyUninstall:
		d.Action, d.Remediation = ActionUninstall, true
	default:
		d.Action, d.Remediation, d.RollbackTo = ActionRollback, true, o.PreviousDeployed
	}
	return d
}

// decideTests gates a revision deployed from the desired digest, and
// ready, on the chart's tests when the watch runs them (test.enable): they
// run once per revision (again on a reconcile request after they failed).
// A failure the watch remediates (test.onFailure: remediate, counted when
// the tests ran) is remediated as a failed upgrade; a first install is
// kept and Stalled unless readiness.remediateInstall, as one not ready in
// time would be waited for. gated: the decision is the tests'; otherwise
// the revision passed them, or they are off or only reported.
func decideTests(o Observation, p policyOf) (d Decision, gated bool) {
	t, v := o.Tested, o.Latest.Version
	switch {
	case !p.Test.Enable:
		return Decision{}, false
	case t == nil:
		return Decision{State: StateUntested, Action: ActionTest, Reason: api.ReasonProgressing,
			Message: fmt.Sprintf("revision %d is ready: running its chart tests", v)}, true
	case t.Result == api.TestSucceeded:
		return Decision{}, false
	case o.ReconcileRequest != "":
		return Decision{State: StateUntested, Action: ActionTest, Reason: api.ReasonProgressing,
			Message: fmt.Sprintf("the chart tests of revision %d failed; running them again, as requested", v)}, true
	case p.Test.OnFailure == watches.TestReport:
		return Decision{}, false
	}
	d = Decision{State: StateTestFailed, Reason: api.ReasonTestFailed, Message: fmt.Sprintf("the chart tests of revision %d failed: %s", v, t.Message)}
	if o.firstInstall() && !p.RemediateInstall {
		d.State = StateStalled
		d.Message += "; a first install is not remediated (readiness.remediateInstall: false): fix the cause, then request a reconcile to test it again, or change the spec"
		return d, true
	}
	return remediate(d, o, p), true
}

// retryGate stops a new attempt when the retry budget for the desired
// digest is spent (Stalled) or its backoff has not passed (wait).
func retryGate(o Observation, p policyOf, state State) (Decision, bool) {
	n := o.failures()
	if n == 0 {
		return Decision{}, false
	}
	if n > p.Retries {
		return Decision{State: StateStalled, Reason: api.ReasonRetriesExhausted,
			Message: fmt.Sprintf("%d attempts failed (retries: %d); change the spec or chart to try again%s", n, p.Retries, o.lastFailure())}, true
	}
	if wait := o.LastFailure.Add(p.Backoff(n)).Sub(o.Now); wait > 0 {
		return Decision{State: state, RequeueAfter: wait, Reason: api.ReasonBackoff,
			Message: fmt.Sprintf("attempt %d failed; retrying in %s%s", n, wait.Round(time.Second), o.lastFailure())}, true
	}
	return Decision{}, false
}
