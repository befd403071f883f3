package api

// Condition types. Ready and Released have positive polarity (True is
// good); Reconciling and Stalled follow the kstatus convention (present and
// True while the state holds, removed otherwise); Remediated is True after a
// failed release was rolled back or uninstalled.
const (
	ConditionReady       = "Ready"
	ConditionReleased    = "Released"
	ConditionReconciling = "Reconciling"
	ConditionStalled     = "Stalled"
	ConditionRemediated  = "Remediated"
	// ConditionDrifted is True while released objects differ from the
	// release (warn mode, or not corrected yet); absent otherwise.
	ConditionDrifted = "Drifted"
	// ConditionTested says what the chart's tests (helm test) found at the
	// current revision: True when they passed, False when one failed;
	// absent when the watch does not run tests, and until they ran at a
	// new revision.
	ConditionTested = "Tested"
)

// Reason is the reason of a condition or of an Event chartkeeper records.
// The set is closed: every reason the operator emits is one of the
// constants below (see Reasons), each documented in docs/conditions.md.
type Reason string

// The reasons, in the order of docs/conditions.md.
const (
	ReasonSucceeded        Reason = "Succeeded"
	ReasonProgressing      Reason = "Progressing"
	ReasonNotReleased      Reason = "NotReleased"
	ReasonPending          Reason = "Pending"
	ReasonBackoff          Reason = "Backoff"
	ReasonDeleting         Reason = "Deleting"
	ReasonInvalidValues    Reason = "InvalidValues"
	ReasonChartError       Reason = "ChartError"
	ReasonRetriesExhausted Reason = "RetriesExhausted"
	ReasonReadinessTimeout Reason = "ReadinessTimeout"
	// ReasonReadinessFailed: a released object failed (kstatus Failed, or a
	// readiness expression's failed held) before the readiness timeout.
	ReasonReadinessFailed Reason = "ReadinessFailed"
	// ReasonReadinessExpressionTimeout: a readiness expression did not
	// finish within its deadline (readiness.ExpressionDeadline) over a
	// released object; the object counts as not ready, and the wait goes
	// on (up to the readiness timeout).
	ReasonReadinessExpressionTimeout Reason = "ReadinessExpressionTimeout"
	// Manual approval (docs/plan-approve.md): a plan was written and awaits
	// approval; computing it failed; an approval names a plan that is not
	// the current one.
	ReasonPlanned               Reason = "Planned"
	ReasonPlanFailed            Reason = "PlanFailed"
	ReasonAwaitingApproval      Reason = "AwaitingApproval"
	ReasonApprovalStale         Reason = "ApprovalStale"
	ReasonHookFailed            Reason = "HookFailed"
	ReasonTransientError        Reason = "TransientError"
	ReasonInstallSucceeded      Reason = "InstallSucceeded"
	ReasonInstallFailed         Reason = "InstallFailed"
	ReasonUpgradeSucceeded      Reason = "UpgradeSucceeded"
	ReasonUpgradeFailed         Reason = "UpgradeFailed"
	ReasonRollbackSucceeded     Reason = "RollbackSucceeded"
	ReasonRollbackFailed        Reason = "RollbackFailed"
	ReasonUninstallSucceeded    Reason = "UninstallSucceeded"
	ReasonUninstallFailed       Reason = "UninstallFailed"
	ReasonUnlocked              Reason = "Unlocked"
	ReasonUnlockFailed          Reason = "UnlockFailed"
	ReasonDriftCorrected        Reason = "DriftCorrected"
	ReasonDriftCorrectionFailed Reason = "DriftCorrectionFailed"
	ReasonPruned                Reason = "Pruned"
	ReasonPruneFailed           Reason = "PruneFailed"
	ReasonSuspended             Reason = "Suspended"
	ReasonAnnotationRefused     Reason = "AnnotationRefused"
	ReasonDriftDetected         Reason = "DriftDetected"
	ReasonInvalidDriftMode      Reason = "InvalidDriftMode"
	// ReasonHooksSkipped: the BeforeUninstall hooks were skipped on request
	// (annotation chartkeeper.dev/skip-uninstall-hooks: "true").
	ReasonHooksSkipped Reason = "HooksSkipped"
	// ReasonChangedOutside: the latest revision carries the desired digest
	// label but was not made from the desired chart and values (a hand
	// helm upgrade); it is upgraded back.
	ReasonChangedOutside Reason = "ChangedOutsideChartkeeper"
	// ReasonReleaseOwnedByAnother: the release this resource would use
	// belongs to another custom resource (named), or was made outside
	// chartkeeper and the watch does not adopt it: nothing is done to it.
	ReasonReleaseOwnedByAnother Reason = "ReleaseOwnedByAnother"
	// ReasonMissingDependency: an install or upgrade failed before Helm
	// stored anything because something outside the chart is missing (the
	// release namespace, the CRD of a kind the chart renders); retried
	// with backoff.
	ReasonMissingDependency Reason = "MissingDependency"
	// ReasonForbidden: an install or upgrade failed before Helm stored
	// anything because the operator is not allowed a request (RBAC);
	// retried with backoff.
	ReasonForbidden Reason = "Forbidden"
	// ReasonCRDUpgradeRefused: the chart's CRD would break custom
	// resources the cluster holds (a version removed, the scope changed, a
	// schema narrowed; the message names the CRD, version and fields), and
	// the watch's crds policy is create-and-replace: nothing is applied
	// until the chart or spec changes, or a reconcile is requested.
	ReasonCRDUpgradeRefused Reason = "CRDUpgradeRefused"
	// ReasonCRDsApplied: an install or upgrade created or replaced the
	// chart's CRDs (named) under the watch's crds policy (an Event).
	ReasonCRDsApplied Reason = "CRDsApplied"
	// ReasonCRDTemplateRefused: a templated CRD the resource's values
	// render is not the one the chart's defaults render (the message names
	// the CRD and the fields): a resource may neither create nor change a
	// CRD. Nothing is applied until the chart or spec changes.
	ReasonCRDTemplateRefused Reason = "CRDTemplateRefused"
	// ReasonValuesSourceMissing: a ConfigMap or Secret the watch's
	// valuesFrom requires (or its key) does not exist (the message names
	// the kind, namespace, name and key, never the data): nothing is
	// released until it does; it is watched, and looked for again after
	// the backoff.
	ReasonValuesSourceMissing Reason = "ValuesSourceMissing"
	// ReasonTestSucceeded: the chart's tests passed at the current
	// revision (the message names them).
	ReasonTestSucceeded Reason = "TestSucceeded"
	// ReasonTestFailed: a chart test failed at the current revision (the
	// message names the test Pod and why it failed); remediated as a
	// failed upgrade or install, or only reported (watch test.onFailure).
	ReasonTestFailed Reason = "TestFailed"
	// ReasonServiceAccountRefused: the ServiceAccount the release would
	// run as cannot be used (the watch's impersonate template gives no
	// valid account, or one outside the release namespace; the resource
	// names one with chartkeeper.dev/service-account where the watch does
	// not allow it): nothing is released until the resource or the watch
	// changes. An action refused by the account's RBAC is Forbidden, or
	// the action's failure, naming the account.
	ReasonServiceAccountRefused Reason = "ServiceAccountRefused"
	// ReasonReleaseForged: a stored revision of the release was not
	// written by chartkeeper (its signature does not match its content, or
	// an unsigned revision names objects outside the watch's scope; the
	// message names the revision and why): nothing touches the objects it
	// names (no drift correction, prune, upgrade, rollback or uninstall);
	// a deleted resource's finalizer is dropped with the objects left.
	ReasonReleaseForged Reason = "ReleaseForged"
	// ReasonTakenOver: a release a predecessor (helm-operator-plugins,
	// operator-sdk's Helm operator) made for this resource was taken
	// over in place: its latest revision relabelled and signed, no new
	// revision, nothing applied (an Event and a status.history entry).
	ReasonTakenOver Reason = "TakenOver"
	// ReasonTakeOverFailed: rewriting the latest revision for a takeover
	// failed; retried with backoff.
	ReasonTakeOverFailed Reason = "TakeOverFailed"
)

// Reasons lists every declared reason.
func Reasons() []Reason {
	return []Reason{
		ReasonSucceeded, ReasonProgressing, ReasonNotReleased, ReasonPending, ReasonBackoff, ReasonDeleting,
		ReasonInvalidValues, ReasonChartError, ReasonRetriesExhausted, ReasonReadinessTimeout, ReasonReadinessFailed,
		ReasonReadinessExpressionTimeout,
		ReasonPlanned, ReasonPlanFailed, ReasonAwaitingApproval, ReasonApprovalStale,
		ReasonHookFailed, ReasonTransientError,
		ReasonInstallSucceeded, ReasonInstallFailed, ReasonUpgradeSucceeded, ReasonUpgradeFailed,
		ReasonRollbackSucceeded, ReasonRollbackFailed, ReasonUninstallSucceeded, ReasonUninstallFailed,
		ReasonUnlocked, ReasonUnlockFailed, ReasonDriftCorrected, ReasonDriftCorrectionFailed,
		ReasonPruned, ReasonPruneFailed,
		ReasonSuspended, ReasonAnnotationRefused,
		ReasonDriftDetected, ReasonInvalidDriftMode,
		ReasonHooksSkipped,
		ReasonChangedOutside,
		ReasonReleaseOwnedByAnother,
		ReasonMissingDependency, ReasonForbidden,
		ReasonCRDUpgradeRefused, ReasonCRDsApplied, ReasonCRDTemplateRefused,
		ReasonValuesSourceMissing,
		ReasonTestSucceeded, ReasonTestFailed,
		ReasonServiceAccountRefused,
		ReasonReleaseForged,
		ReasonTakenOver, ReasonTakeOverFailed,
		ReasonInstallSuccessful, ReasonUpgradeSuccessful, ReasonUninstallSuccessful,
		ReasonInstallError, ReasonUpgradeError, ReasonUninstallError, ReasonReconcileError,
	}
}

// IsReason reports whether s is a declared reason.
func IsReason(s string) bool {
	for _, r := range Reasons() {
		if string(r) == s {
			return true
		}
	}
	return false
}
