package release

import (
	"time"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// State names what an observation found.
type State string

// The states. Decide (decide.go) looks for them in this order, the first
// found wins: Deleting; Stalled (a refused annotation); Suspended;
// Waiting; Stalled (invalid values, a release owned by another or
// forged); Absent; Locked; Inherited; Failed; OutOfSync, or
// AwaitingApproval when it waits for approval; Leftovers; Drifted;
// Unready; Untested or TestFailed; InSync. A state that would act is
// Stalled instead when its retries are exhausted (retryGate, remediate).
const (
	// StateDeleting: the custom resource is being deleted.
	StateDeleting State = "Deleting"
	// StateStalled: nothing can be done until the spec or chart changes
	// (invalid values, retries exhausted).
	StateStalled State = "Stalled"
	// StateAbsent: no release exists.
	StateAbsent State = "Absent"
	// StateLocked: the latest revision is pending-install/upgrade/rollback.
	// It is unlocked only when abandoned: no action of ours runs for it
	// and it was last written longer ago than the action timeout (an
	// operation still in flight, a person's helm upgrade say, is waited for).
	StateLocked State = "Locked"
	// StateInherited: the latest revision was made for this resource by a
	// predecessor operator (helm-operator-plugins, operator-sdk's Helm
	// operator): its storage Secret is owned by the resource and carries
	// no chartkeeper label. It is taken over in place (takeover.go).
	StateInherited State = "Inherited"
	// StateFailed: the latest revision failed.
	StateFailed State = "Failed"
	// StateOutOfSync: the latest revision was made from another chart or values.
	StateOutOfSync State = "OutOfSync"
	// StateLeftovers: released as desired, but objects an earlier (failed
	// or interrupted) revision created, and the deployed one does not hold,
	// remain.
	StateLeftovers State = "Leftovers"
	// StateDrifted: released objects were deleted or edited.
	StateDrifted State = "Drifted"
	// StateUnready: released as desired, objects not all Ready yet.
	StateUnready State = "Unready"
	// StateUntested: released as desired and Ready, and the watch runs the
	// chart's tests (test.enable), which have not run at this revision.
	StateUntested State = "Untested"
	// StateTestFailed: released as desired and Ready, but the chart's tests
	// failed at this revision, and the watch remediates that
	// (test.onFailure: remediate).
	StateTestFailed State = "TestFailed"
	// StateInSync: released as desired and Ready.
	StateInSync State = "InSync"
	// StateSuspended: the annotation chartkeeper.dev/suspend is "true":
	// nothing is done but the uninstall of a deleted resource.
	StateSuspended State = "Suspended"
	// StateAwaitingApproval: the desired chart or values changed and the
	// watch (or resource) wants upgrades approved: the upgrade's plan is in
	// status.plan, and nothing is done until it is approved (plan.go).
	StateAwaitingApproval State = "AwaitingApproval"
	// StateWaiting: a ConfigMap or Secret the watch's valuesFrom requires
	// is missing or cannot be read: nothing is done until it can (it is
	// watched, and looked for again after the backoff).
	StateWaiting State = "Waiting"
)

// ActionKind is the one action a step runs.
type ActionKind string

// The actions.
const (
	ActionNone         ActionKind = ""
	ActionInstall      ActionKind = "Install"
	ActionUpgrade      ActionKind = "Upgrade"
	ActionRollback     ActionKind = "Rollback"
	ActionUninstall    ActionKind = "Uninstall"
	ActionUnlock       ActionKind = "Unlock"
	ActionCorrectDrift ActionKind = "CorrectDrift"
	ActionPrune        ActionKind = "Prune"
	// ActionPlan writes the plan of an upgrade awaiting approval; it
	// changes nothing else.
	ActionPlan ActionKind = "Plan"
	ActionTest ActionKind = "Test"
	// ActionTakeOver takes over a release a predecessor made for the
	// resource: its latest revision is rewritten in place with
	// chartkeeper's labels and signature (takeover.go).
	ActionTakeOver ActionKind = "TakeOver"
)

// Revision is what is known of a stored release revision.
type Revision struct {
	Version int
	Status  helmrelease.Status
	// Digest of the chart and values it was made from ("" if not ours).
	Digest string
	// IsRollback: the revision was made by a rollback (its storage stamp,
	// helm.LabelMadeBy; for a revision stored before the stamps, what
	// status.release says).
	IsRollback bool
}

// Observation is everything Decide needs; the observer fills it.
type Observation struct {
	Now      time.Time
	Deleting bool
	// DeletingSince is when deletion was requested.
	DeletingSince time.Time
	// DesiredDigest fingerprints the chart and values the resource asks for.
	DesiredDigest string
	// ValuesError: the values cannot be computed or the chart rejects them;
	// a *ValuesSourceError when valuesFrom names what is not there yet.
	ValuesError error
	// Latest is the newest revision; nil when no release exists.
	Latest *Revision
	// PendingSince is when a pending Latest was last written by whoever
	// runs its operation (zero: unknown, taken as long ago).
	PendingSince time.Time
	// ActionRunning: an action of this operator is running on the release
	// (another step's: steps on one resource never overlap).
	ActionRunning bool
	// PreviousDeployed is the newest revision before Latest that was deployed
	// (status deployed, or superseded and never failed: lineage.go); 0 if none.
	PreviousDeployed int
	// ObjectsRemaining counts released objects still present (Deleting).
	ObjectsRemaining int
	// Drift lists released objects found deleted or edited.
	Drift []Drift
	// DriftMode is the resource's drift mode (its chartkeeper.dev/drift
	// annotation, else the watch's); "": the watch's.
	DriftMode watches.DriftMode
	// Ready: every released object is Current (kstatus, or the watch's
	// readiness expressions for their kind).
	Ready bool
	// ManualApproval: upgrades wait for a person's approval of their plan
	// (upgrade.approval: manual, or the resource's annotation). Then
	// PlanInputs identifies what the upgrade of Latest to the desired chart
	// and values is made from and for (plan.go), Planned is the digest of
	// the plan status.plan holds when it was made for PlanInputs ("": to
	// be planned), and Approved the plan the resource's
	// chartkeeper.dev/approve names ("" once applied).
	ManualApproval                bool
	PlanInputs, Planned, Approved string
	// ReadyFailed: a released object has Failed (it will not become
	// Current without a change): the readiness wait is over.
	ReadyFailed bool
	// ExpressionTimedOut: a readiness expression was cut at its deadline
	// over a released object (named in NotReady).
	ExpressionTimedOut bool
	// NotReady says which objects are not Ready and why.
	NotReady string
	// Objects are the released objects of Latest, each with its readiness
	// (for status.inventory; Decide reads Ready and NotReady); nil when
	// the step did not look at them.
	Objects []observedObject
	// RemediationsInFlight counts the other releases of the watch being
	// remediated now (inflight.go): remediated and not yet ready.
	RemediationsInFlight int
	// ReleasedAt is when Latest was made by us (readiness timeout start).
	ReleasedAt time.Time
	// Tested is what the chart's tests found at Latest (status.test, when
	// it names Latest's revision); nil: they have not run at it.
	Tested *api.TestStatus
	// Leftovers are objects of the release that its deployed revision does
	// not hold (see Engine.leftovers).
	Leftovers []object
	// Failures, FailedDigest, LastFailure and LastFailureMessage come from
	// the status.
	Failures           int
	FailedDigest       string
	LastFailure        time.Time
	LastFailureMessage string
	// Suspended: the annotation chartkeeper.dev/suspend is "true".
	Suspended bool
	// AnnotationError says which annotations are refused (invalid value, or
	// unknown to chartkeeper) and why.
	AnnotationError error
	// ReconcileRequest is a chartkeeper.dev/reconcile-requested-at value
	// not handled yet; the failure bookkeeping above is already reset.
	ReconcileRequest string
	// Backoff is a failed action or hook waiting out its backoff (status).
	Backoff Backoff
	// SkipUninstallHooks: the resource is annotated to be deleted without
	// its BeforeUninstall hooks (api.AnnotationSkipUninstallHooks).
	SkipUninstallHooks bool
	// OutOfBand: Latest carries the desired digest label but was not made
	// from the desired chart and values (a person's helm upgrade inherits
	// the label); it says what Helm recorded of it (provenance.go). Its
	// Digest is then "".
	OutOfBand string
	// Forged, when set, says a stored revision was not written by
	// chartkeeper (forgery.go): nothing is done to the release (Latest is
	// then left nil).
	Forged string
	// Owner, when set, says the release belongs to someone else: nothing
	// is done to it (Latest is then left nil).
	Owner ReleaseOwner
}

// ReleaseOwner names who a release belongs to when it is not this
// resource (docs/release-engine.md, Ownership).
type ReleaseOwner struct {
	// Release is the release, "<namespace>/<name>".
	Release string
	// By names the custom resource that owns it ("App team/db"); empty
	// with Foreign.
	By string
	// Foreign: the release was not made by chartkeeper (a person's helm
	// install) and the watch does not adopt it.
	Foreign bool
	// Predecessor: the release is this resource's, made by a predecessor
	// operator (its latest revision's storage Secret is owned by the
	// resource and carries no chartkeeper label): it is taken over
	// (ActionTakeOver), not refused.
	Predecessor bool
}

// refused reports whether the release belongs to someone else.
func (r ReleaseOwner) refused() bool { return r.By != "" || r.Foreign }

// failures returns the failures counted for the desired digest: a change of
// spec or chart starts the count again.
// firstInstall: Latest is the release's first revision (an install),
// with nothing deployed before it. A later revision with no deployed one
// before it is an upgrade whose history (maxHistory) no longer holds a
// revision to roll back to; it is never taken for an install, which is
// remediated by uninstalling.
func (o Observation) firstInstall() bool {
	return o.PreviousDeployed == 0 && o.Latest != nil && o.Latest.Version == 1 && !o.Latest.IsRollback
}

func (o Observation) failures() int {
	if o.FailedDigest != o.DesiredDigest {
		return 0
	}
	return o.Failures
}

// lastFailure says why the last counted attempt at the desired digest
// failed, as "; last failure: <why>" to end a message, or "" when unknown.
func (o Observation) lastFailure() string {
	if o.failures() == 0 || o.LastFailureMessage == "" {
		return ""
	}
	return "; last failure: " + o.LastFailureMessage
}

// Decision is Decide's verdict.
type Decision struct {
	State  State
	Action ActionKind
	// RollbackTo is the target revision of ActionRollback.
	RollbackTo int
	// Remediation: the action repairs a failure (sets Remediated).
	Remediation bool
	// CountFailure: the observation itself is a failure to count (e.g. a
	// readiness timeout), before the action runs.
	CountFailure bool
	// Finished: deletion is complete; the finalizer may go.
	Finished bool
	// SkipHooks: uninstall without the BeforeUninstall hooks (on request).
	SkipHooks bool
	// BackingOff: what the step would run (action or hooks) failed and
	// waits for its backoff; nothing is run.
	BackingOff bool
	// RequeueAfter asks for another step after this long (0: only on change).
	RequeueAfter time.Duration
	// Reason and Message explain the state (condition reason and message).
	Reason  api.Reason
	Message string
}

// policyOf is the watch's policy as Decide takes it: an alias of the whole
// watches.Policy (not a subset of it), of which Decide reads what decides:
// retries and remediation, backoff, timeouts and waits, drift, the upgrade
// strategy and the chart's tests.
type policyOf = watches.Policy
