package release

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// The predecessors' status (helm-operator-plugins, operator-sdk's Helm
// operator: api.PredecessorConditions and status.deployedRelease). A
// resource a user switched to chartkeeper still holds what they wrote.
// By default it is dropped from the status the step computes, so the
// status write that follows (the first one after the switch: a merge
// patch of the status, which replaces the conditions list and sets
// deployedRelease to null) removes it, and nothing more is ever written
// for it: no request is added. With the watch's statusCompat:
// HelmOperator, the step writes their conditions from its own, and
// deployedRelease from the release (docs/conditions.md, Predecessors'
// status).

// predecessorStatus removes or maintains the predecessors' status in the
// step's status (run when the step ends, whatever its path).
func (s *step) predecessorStatus(ctx context.Context) {
	st := s.st
	if !s.t.Watch.HelmOperatorStatus() {
		for _, typ := range api.PredecessorConditions() {
			meta.RemoveStatusCondition(&st.Conditions, typ)
		}
		st.DeployedRelease = nil
		return
	}
	meta.RemoveStatusCondition(&st.Conditions, api.ConditionPaused)
	if meta.FindStatusCondition(st.Conditions, api.ConditionReady) == nil {
		return // the step computed nothing (an error before it judged)
	}
	for _, c := range predecessorConditions(compatInputOf(st)) {
		s.setCondition(c.typ, c.status, c.reason, c.message)
	}
	s.deployedRelease(ctx)
}

// compatIn is what the predecessors' conditions are derived from.
type compatIn struct {
	// released and ready are chartkeeper's conditions (nil: absent).
	released, ready *metav1.Condition
	stalled         bool
	// revision is status.release's (0: no release).
	revision int
	// lastAction is the newest install, upgrade or uninstall in
	// status.history (ActionNone: none).
	lastAction ActionKind
}

func compatInputOf(st *api.Status) compatIn {
	in := compatIn{
		released: meta.FindStatusCondition(st.Conditions, api.ConditionReleased),
		ready:    meta.FindStatusCondition(st.Conditions, api.ConditionReady),
		stalled:  meta.IsStatusConditionTrue(st.Conditions, api.ConditionStalled),
	}
	if st.Release != nil {
		in.revision = st.Release.Revision
	}
	for _, a := range st.History { // newest first
		if k := ActionKind(a.Action); k == ActionInstall || k == ActionUpgrade || k == ActionUninstall {
			in.lastAction = k
			break
		}
	}
	return in
}

// compatCondition is one predecessor condition to write.
type compatCondition struct {
	typ     string
	status  metav1.ConditionStatus
	reason  api.Reason
	message string
}

// releaseFailures are the reasons of Released False that mean an install,
// upgrade or uninstall failed (or is backed off after one): ReleaseFailed
// True, as the predecessors say when their install, upgrade or uninstall
// returned an error.
var releaseFailures = map[api.Reason]bool{
	api.ReasonInstallFailed: true, api.ReasonUpgradeFailed: true, api.ReasonRollbackFailed: true,
	api.ReasonUninstallFailed: true, api.ReasonReadinessTimeout: true, api.ReasonReadinessFailed: true,
	api.ReasonTestFailed: true, api.ReasonRetriesExhausted: true, api.ReasonChartError: true,
	api.ReasonCRDUpgradeRefused: true, api.ReasonCRDTemplateRefused: true,
	api.ReasonMissingDependency: true, api.ReasonForbidden: true, api.ReasonBackoff: true,
}

// reconcileErrors are the reasons of Ready (besides a release failure and
// Stalled) that mean reconciling failed and is retried: Irreconcilable
// True, as the predecessors say when a step of theirs returned an error.
var reconcileErrors = map[api.Reason]bool{
	api.ReasonBackoff: true, api.ReasonHookFailed: true, api.ReasonValuesSourceMissing: true,
	api.ReasonPlanFailed: true, api.ReasonForbidden: true, api.ReasonMissingDependency: true,
}

// Messages of Deployed True, as helm-operator-plugins words them (it
// gives the chart's NOTES instead when there are some).
const (
	installedMessage = "release was successfully installed"
	upgradedMessage  = "release was successfully upgraded"
)

// predecessorConditions derives Deployed, ReleaseFailed, Irreconcilable
// and Initialized from chartkeeper's conditions: a pure function.
func predecessorConditions(in compatIn) []compatCondition {
	readyReason := api.ReasonProgressing
	readyMessage := ""
	if in.ready != nil {
		readyReason, readyMessage = declaredReason(in.ready.Reason, readyReason), in.ready.Message
	}
	releasedReason, releasedMessage, releasedTrue := readyReason, "", false
	if in.released != nil {
		releasedReason, releasedMessage = declaredReason(in.released.Reason, readyReason), in.released.Message
		releasedTrue = in.released.Status == metav1.ConditionTrue
	}
	out := []compatCondition{{typ: api.ConditionInitialized, status: metav1.ConditionTrue, reason: api.ReasonSucceeded}}

	deployed := compatCondition{typ: api.ConditionDeployed, status: metav1.ConditionFalse, reason: releasedReason, message: releasedMessage}
	switch {
	case releasedTrue && in.revision == 1:
		deployed = compatCondition{typ: api.ConditionDeployed, status: metav1.ConditionTrue, reason: api.ReasonInstallSuccessful, message: installedMessage}
	case releasedTrue:
		deployed = compatCondition{typ: api.ConditionDeployed, status: metav1.ConditionTrue, reason: api.ReasonUpgradeSuccessful, message: upgradedMessage}
	case releasedReason == api.ReasonUninstallSucceeded:
		deployed.reason = api.ReasonUninstallSuccessful
	}
	out = append(out, deployed)

	failed := !releasedTrue && in.released != nil && releaseFailures[releasedReason]
	if failed {
		out = append(out, compatCondition{typ: api.ConditionReleaseFailed, status: metav1.ConditionTrue, reason: failedAction(releasedReason, in), message: releasedMessage})
	} else {
		out = append(out, compatCondition{typ: api.ConditionReleaseFailed, status: metav1.ConditionFalse, reason: releasedReason})
	}

	if failed || in.stalled || reconcileErrors[readyReason] {
		out = append(out, compatCondition{typ: api.ConditionIrreconcilable, status: metav1.ConditionTrue, reason: api.ReasonReconcileError, message: readyMessage})
	} else {
		out = append(out, compatCondition{typ: api.ConditionIrreconcilable, status: metav1.ConditionFalse, reason: readyReason})
	}
	return out
}

// declaredReason is the declared reason r names (chartkeeper writes no
// other), or otherwise when r is none.
func declaredReason(r string, otherwise api.Reason) api.Reason {
	for _, d := range api.Reasons() {
		if string(d) == r {
			return d
		}
	}
	return otherwise
}

// failedAction is ReleaseFailed's reason: the predecessors' name of the
// action that failed.
func failedAction(released api.Reason, in compatIn) api.Reason {
	switch {
	case released == api.ReasonInstallFailed:
		return api.ReasonInstallError
	case released == api.ReasonUninstallFailed || in.lastAction == ActionUninstall:
		return api.ReasonUninstallError
	case in.lastAction == ActionInstall || in.lastAction == ActionNone && in.revision == 0:
		return api.ReasonInstallError
	}
	return api.ReasonUpgradeError
}

// deployedRelease keeps status.deployedRelease: the release's name and
// manifest while Deployed is True, read again (from the release storage)
// only when status.release names a revision other than the one it holds;
// kept as it is while Deployed is False (the last deployed manifest, as
// the predecessors keep theirs), gone with the release.
func (s *step) deployedRelease(ctx context.Context) {
	st := s.st
	if st.Release == nil {
		st.DeployedRelease = nil
		return
	}
	rev := st.Release.Revision
	if s.d.ref.Name == "" || !meta.IsStatusConditionTrue(st.Conditions, api.ConditionDeployed) || rev == 0 ||
		st.DeployedRelease != nil && st.DeployedRelease.Revision == rev && st.DeployedRelease.Name == s.d.ref.Name {
		return
	}
	rel, err := s.e.helm.Get(ctx, s.d.ref.Name, s.d.ref.Namespace, rev)
	if err != nil {
		s.e.log.V(1).Info("reading the manifest for status.deployedRelease; read again at the next step",
			"name", s.d.ref.Name, "namespace", s.d.ref.Namespace, "revision", rev, "error", err.Error())
		return
	}
	st.DeployedRelease = &api.DeployedRelease{Name: rel.Name, Revision: rev,
		Manifest: deployedManifest(rel.Manifest, s.d.redact, s.d.ref.Name, s.d.ref.Namespace)}
}
