package release

import (
	"context"
	"errors"
	"fmt"
	"time"

	helmrelease "helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/images"
	"github.com/chartkeeper/chartkeeper/internal/metrics"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/internal/values"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// action is a thing a step can do: one for each ActionKind but ActionNone
// (actionFor). Each lives in its own file (install.go, upgrade.go,
// rollback.go, uninstall.go, unlock.go, correctdrift.go, prune.go, plan.go,
// charttest.go, takeover.go) and tells its story there: what it runs, and
// how its success and its failure are recorded (the Event and its reason,
// whether a failure counts toward remediation, status.release, the
// Released and Remediated conditions), with the helpers below that several
// share (failure, releasedDesired, chartRejected, ...). Decide chooses the
// action; act runs it and reads back what storage holds.
type action interface {
	// kind names the action (metrics, status.release.lastAction, Result.Ran).
	kind() ActionKind
	// hooksBefore names the Go hooks due before the action.
	hooksBefore(s *step) hookPhase
	// run does the work and returns the release it made, if it has it.
	run(ctx context.Context, s *step) (*helmrelease.Release, error)
	// succeeded records a success.
	succeeded(s *step, out outcome)
	// failed records a failure; retry asks for the whole step to be retried
	// as it is (a transient error before anything was stored).
	failed(s *step, out outcome, err error) (retry bool)
}

// hookPhase names the Go hooks due before an action.
type hookPhase int

// The hook phases an action can ask for.
const (
	noHooks              hookPhase = iota
	preReleaseHooks                // PreRelease
	beforeUninstallHooks           // BeforeUninstall
)

// unhooked is embedded by the actions no hook precedes.
type unhooked struct{}

func (unhooked) hooksBefore(*step) hookPhase { return noHooks }

// actionFor is the action lookup: the action of a decision, nil for none.
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
	case ActionPlan:
		return &plan{}
	case ActionTest:
		return &chartTest{}
	case ActionTakeOver:
		return takeOver{}
	}
	return nil
}

// outcome is what storage holds after an action.
type outcome struct {
	// before and after are the latest revision before and after the action
	// (0: no release); digest is the digest label of after.
	before, after int
	digest        string
	// began and now bound the action; prior is status.release before it.
	began, now metav1.Time
	prior      *api.ReleaseStatus
}

// changed reports whether the action made or removed a revision.
func (o outcome) changed() bool { return o.after != o.before }

// act runs the action and has it record what it did. It returns the
// action's error (reported, counted) and, separately, an error that should
// make the whole step retry (transient trouble before anything was stored).
func (s *step) act(ctx context.Context, a action) (actionErr, stepErr error) {
	e := s.e
	var out outcome
	if s.o.Latest != nil {
		out.before = s.o.Latest.Version
	}
	begin := e.clock.Now()
	out.began = metav1.NewTime(begin)
	if rs := s.st.Release; rs != nil {
		prior := *rs
		out.prior = &prior
	}
	done := e.running.start(releaseKey(s.d.ref))
	rel, err := a.run(ctx, s)
	done()
	err = s.d.redact.Error(err)
	metrics.ObserveAction(string(a.kind()), err, e.clock.Since(begin))
	metrics.ObserveOutcome(s.t.Watch.Kind, string(a.kind()), s.dec.Remediation, err)

	// Read back what storage holds now: it tells whether the action changed
	// anything, and what the cache must show before the next step acts.
	revs, rerr := e.helm.StoredRevisions(ctx, s.d.ref.Name, s.d.ref.Namespace)
	if rerr != nil {
		return err, rerr
	}
	if len(revs) > 0 {
		l := revs[len(revs)-1]
		out.after, out.digest = l.Version, l.Labels[api.LabelDigest]
	}
	key := releaseKey(s.d.ref)
	e.expect.expect(key, out.after)
	out.now = metav1.NewTime(e.clock.Now())
	if err != nil {
		if a.failed(s, out, err) {
			return err, err
		}
		return err, nil
	}
	if rel != nil {
		if objs, perr := parseManifest(rel.Manifest, s.d.ref.Namespace, e.helm.Mapper()); perr == nil {
			e.manifests.setOnly(key, rel.Version, remembered(objs, s.d.ref, rel.Version))
		}
		e.proofs.setOnly(key, rel.Version, prove(rel, s.t.Watch.Chart, s.d.values))
	}
	a.succeeded(s, out)
	s.backoffCleared(string(a.kind()), phaseOf(a.hooksBefore(s)))
	return nil, nil
}

// failure records a failed action the common way. A transient error that
// changed nothing is retried as it is: an Event TransientError, and retry
// (no attempt is recorded: nothing was tried). Otherwise: an Event,
// Released False with reason, a failed attempt in status.history, and,
// with count, a failure toward remediation.
func (s *step) failure(a action, out outcome, err error, reason api.Reason, count bool) (retry bool) {
	if !out.changed() && IsTransient(err) {
		s.eventf(true, api.ReasonTransientError, "%s failed, will retry: %v", a.kind(), err)
		return true
	}
	why := fmt.Sprintf("%s failed: %v", a.kind(), err)
	counted := 0
	if count {
		s.countFailure(why)
		counted = s.st.Failures
	}
	s.backOff(string(a.kind()), why, counted)
	s.eventf(true, reason, "%s", why)
	s.setCondition(api.ConditionReleased, metav1.ConditionFalse, reason, why)
	s.attempted(a, out, api.AttemptFailed, reason, why)
	return false
}

// recordRevision describes the latest revision in status.release after an
// action that changed it.
func (s *step) recordRevision(a action, out outcome) {
	if out.changed() {
		s.st.Release = s.releaseStatus(a, out)
	}
}

// releaseStatus describes revision out.after, made by a, of the watch's
// chart (nil when no revision is left).
func (s *step) releaseStatus(a action, out outcome) *api.ReleaseStatus {
	if out.after == 0 {
		return nil
	}
	md := s.t.Watch.Chart.Metadata
	now := out.now
	return &api.ReleaseStatus{Name: s.d.ref.Name, Namespace: s.d.ref.Namespace, Revision: out.after, Digest: out.digest,
		Chart: md.Name, Version: md.Version, AppVersion: md.AppVersion, LastAction: string(a.kind()), LastActionTime: &now}
}

// remediated records a remediation that worked: Released False with the
// decision's reason, Remediated True with reason, saying what was done.
func (s *step) remediated(reason api.Reason, done string) {
	s.setCondition(api.ConditionReleased, metav1.ConditionFalse, s.dec.Reason, s.dec.Message)
	s.setCondition(api.ConditionRemediated, metav1.ConditionTrue, reason, fmt.Sprintf("%s after: %s", done, s.dec.Message))
}

// chartRejected records an install or upgrade the chart refused before
// Helm stored anything (a *ChartError, or any error that is not
// transient): terminal until the desired digest changes, with an Event and
// Released False ChartError. It reports whether it was one.
func (s *step) chartRejected(a action, out outcome, err error) bool {
	var ce *ChartError
	if out.changed() || (!errors.As(err, &ce) && IsTransient(err)) {
		return false
	}
	s.st.TerminalError, s.st.TerminalDigest, s.st.TerminalReason = s.failureMessage(err.Error()), s.d.digest, ""
	s.eventf(true, api.ReasonChartError, "%s", err)
	why := fmt.Sprintf("%s failed: %v", a.kind(), err)
	s.setCondition(api.ConditionReleased, metav1.ConditionFalse, api.ReasonChartError, why)
	s.attempted(a, out, api.AttemptFailed, api.ReasonChartError, why)
	return true
}

// dependencyMissing records an install or upgrade that failed before Helm
// stored anything for a cause outside the chart that can heal without a
// spec change (dependencyReason: a missing namespace or CRD, RBAC): not
// terminal and not counted toward the retries, but backed off like any
// failure, reported with that reason (Event and Released False) until the
// next attempt. It reports whether it was one.
func (s *step) dependencyMissing(a action, out outcome, err error) bool {
	reason := dependencyReason(err)
	if out.changed() || reason == "" {
		return false
	}
	why := s.heldBack(a, reason, err)
	s.setCondition(api.ConditionReleased, metav1.ConditionFalse, reason, why)
	s.attempted(a, out, api.AttemptFailed, reason, why)
	return true
}

// heldBack backs off an action that failed for a cause outside the chart
// that can heal without a spec change (reason: MissingDependency,
// Forbidden), reported with that reason while it waits (an Event; the
// caller writes its condition), and returns why it failed.
func (s *step) heldBack(a action, reason api.Reason, err error) string {
	why := fmt.Sprintf("%s failed: %v", a.kind(), err)
	left := s.backOff(string(a.kind()), why, 0)
	s.st.BackoffReason = string(reason)
	s.eventf(true, reason, "%s; retrying in %s", why, left.Round(time.Second))
	return why
}

// releasedDesired records an install or upgrade that succeeded: the new
// revision in status.release, drift baselines from its writes (tookWrites), the terminal error
// cleared, the tests of an earlier revision forgotten, an Event and an
// attempt in status.history, Released True with reason, and Remediated dropped. The failure count
// stays until the revision is found in sync (ready, and tested when the
// watch tests): a revision that fails after its release (not ready in
// time, its tests failed) counts toward the same retries.
func (s *step) releasedDesired(a action, out outcome, reason api.Reason) {
	st := s.st
	s.recordRevision(a, out)
	s.e.drift.tookWrites(releaseKey(s.d.ref), s.writes)
	st.TerminalError, st.TerminalDigest, st.TerminalReason = "", "", ""
	s.untested()
	done := fmt.Sprintf("%s of revision %d succeeded", a.kind(), out.after)
	s.eventf(false, reason, "%s", done)
	s.attempted(a, out, api.AttemptSucceeded, reason, done)
	s.setCondition(api.ConditionReleased, metav1.ConditionTrue, reason, s.releasedMessage())
	s.dropCondition(api.ConditionRemediated)
}

// maxFailureMessage bounds the failure message kept in the status, in
// characters (an error can quote a whole manifest).
const maxFailureMessage = 1024

// failuresCleared drops the failure count and why the last attempt failed.
func (s *step) failuresCleared() {
	s.st.Failures, s.st.FailedDigest, s.st.LastFailureTime, s.st.LastFailureMessage = 0, "", nil, ""
}

// countFailure counts a failed attempt at the desired digest and keeps why.
func (s *step) countFailure(why string) {
	now := metav1.NewTime(s.e.clock.Now())
	if s.st.FailedDigest != s.d.digest {
		s.st.Failures, s.st.FailedDigest = 0, s.d.digest
	}
	s.st.Failures++
	s.st.LastFailureTime = &now
	s.st.LastFailureMessage = s.failureMessage(why)
}

// failureMessage is why an attempt failed as the status keeps it
// (lastFailureMessage, terminalError): secret values redacted, then cut
// to maxFailureMessage characters.
func (s *step) failureMessage(why string) string {
	why = s.d.redact.Redact(why)
	if r := []rune(why); len(r) > maxFailureMessage {
		why = string(r[:maxFailureMessage]) + "…"
	}
	return why
}

// request builds the Install/Upgrade request, checking the values against
// the chart's schema first: a rejection is a *ChartError. Helm skips the
// chart's crds/; the post-renderer hands the templated CRDs to the CRD
// step (crds.go), which applies both before Helm applies anything.
func (s *step) request(ctx context.Context) (helm.Request, error) {
	w := s.t.Watch
	if err := values.Validate(w.Chart, s.d.values); err != nil {
		return helm.Request{}, &ChartError{Err: fmt.Errorf("values rejected by chart %s: %w", w.Chart.Metadata.Name, err)}
	}
	owner := s.owner()
	admit := admitScope(w.Scope, s.d.ref.Namespace)
	labels := s.ownerLabels()
	labels[api.LabelDigest] = s.d.digest
	return helm.Request{
		Name:       s.d.ref.Name,
		Namespace:  s.d.ref.Namespace,
		Chart:      w.Chart,
		Values:     s.d.values,
		Labels:     labels,
		MaxHistory: w.Policy.MaxHistory,
		PostRenderer: ownership.PostRenderer{
			Owner: owner, ReleaseNamespace: s.d.ref.Namespace, Mapper: s.e.helm.Mapper(),
			Edit: relocate(w.Images), Admit: admit, CRDs: s.crdHook(ctx),
		},
		SkipCRDs:    true,
		Guard:       s.guard(ctx, admit), // hooks are not post-rendered: the kube client checks them
		Description: fmt.Sprintf("chartkeeper: %s %s/%s generation %d", owner.GVK.Kind, owner.Namespace, owner.Name, s.obj.GetGeneration()),
	}, nil
}

// owner is the step's custom resource as the owner of what it releases.
func (s *step) owner() ownership.Owner {
	return ownership.Owner{GVK: s.obj.GroupVersionKind(), Namespace: s.obj.GetNamespace(), Name: s.obj.GetName(), UID: s.obj.GetUID()}
}

// ownerLabels are the labels every revision chartkeeper stores carries
// besides its digest: managed, and its owner's kind and UID.
func (s *step) ownerLabels() map[string]string {
	owner := s.owner()
	labels := map[string]string{api.LabelManaged: "true"}
	if k, ok := owner.KindLabel(); ok {
		labels[api.LabelOwnerKind] = k
	}
	if owner.UID != "" {
		labels[api.LabelOwnerUID] = string(owner.UID)
	}
	return labels
}

// guard is what Helm is given to keep an action in scope and its logs free
// of secret values.
func (s *step) guard(ctx context.Context, admit helm.Admit) helm.Guard {
	if s.writes == nil {
		s.writes = &writes{}
	}
	return helm.Guard{Admit: admit, Redact: s.d.redact.Redact,
		Timeout: s.t.Watch.Policy.Timeout, AsReleased: s.e.asReleased(ctx, releaseKey(s.d.ref)), Wrote: s.writes.wrote, As: s.user(),
		LookupCluster: s.t.Watch.LookupScope() == watches.LookupCluster}
}

// relocate is the post-render edit of a watch's images setting (nil: none).
func relocate(c *watches.ImagesConfig) func(map[string]any) error {
	if c == nil {
		return nil
	}
	return images.Relocation{Registry: c.Registry, PullSecrets: c.PullSecrets}.Apply
}
