package api

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Status is the .status chartkeeper writes on a custom resource.
type Status struct {
	// ObservedGeneration is the .metadata.generation the status describes.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions: Ready, Released, Reconciling, Stalled, Remediated.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Release summarises the Helm release (never its manifest).
	Release *ReleaseStatus `json:"release,omitempty"`
	// Failures counts consecutive failed attempts at FailedDigest; it is
	// reset when the desired digest changes (spec or chart).
	Failures int `json:"failures,omitempty"`
	// FailedDigest is the desired digest the failures were counted for.
	FailedDigest string `json:"failedDigest,omitempty"`
	// LastFailureTime is when the last failure happened (for backoff).
	LastFailureTime *metav1.Time `json:"lastFailureTime,omitempty"`
	// LastFailureMessage says why the last attempt failed (secret values
	// redacted), so that a resource that stopped retrying still says why.
	LastFailureMessage string `json:"lastFailureMessage,omitempty"`
	// TerminalError is the chart's own message when it rejects the values
	// (schema, template) for TerminalDigest: nothing is retried until the
	// desired digest changes. Secret values redacted, cut to 1,024
	// characters as LastFailureMessage.
	TerminalError  string `json:"terminalError,omitempty"`
	TerminalDigest string `json:"terminalDigest,omitempty"`
	// TerminalReason is the reason of TerminalError when it is not the
	// chart's (CRDUpgradeRefused); empty: ChartError.
	TerminalReason string `json:"terminalReason,omitempty"`
	// NextAttemptTime: after a failed action or Go hook, BackoffOf is not
	// tried again before this time (the watch's remediation.backoff,
	// exponential in BackoffFailures, with jitter).
	NextAttemptTime *metav1.Time `json:"nextAttemptTime,omitempty"`
	// BackoffOf names what failed: an action (Install, Upgrade, Rollback,
	// Uninstall, Unlock, CorrectDrift, Prune), a Go hook phase
	// (Translate, PreRelease, PostRelease, BeforeUninstall), or ValuesFrom
	// (an object of the watch's valuesFrom is missing or unreadable).
	BackoffOf string `json:"backoffOf,omitempty"`
	// BackoffFailures counts the consecutive failures of BackoffOf for the
	// desired digest BackoffDigest; all four are cleared when it succeeds,
	// and a change of the desired digest starts again.
	BackoffFailures int    `json:"backoffFailures,omitempty"`
	BackoffDigest   string `json:"backoffDigest,omitempty"`
	// App is what Go hooks report about the running application
	// (members, endpoints, versions, last backup, ...).
	App map[string]any `json:"app,omitempty"`
	// LastHandledReconcileAt is the last value of the annotation
	// chartkeeper.dev/reconcile-requested-at acted on (see
	// AnnotationReconcileRequestedAt).
	LastHandledReconcileAt string `json:"lastHandledReconcileAt,omitempty"`
	// BackoffReason is the reason a backed-off failure is reported with
	// while it waits, when it says more than Backoff (MissingDependency,
	// Forbidden, ValuesSourceMissing: what is missing); cleared with the
	// backoff.
	BackoffReason string `json:"backoffReason,omitempty"`
	// Plan is the upgrade awaiting approval (manual approval only).
	Plan *PlanStatus `json:"plan,omitempty"`
	// AppliedPlan is the digest of the last plan approved and applied: an
	// approval annotation still naming it approves nothing new.
	AppliedPlan string `json:"appliedPlan,omitempty"`
	// History is the last MaxHistory attempts (actions run on the
	// release), newest first (history.go).
	History []Attempt `json:"history,omitempty"`
	// Inventory is what the release's revision holds and how much of it
	// is ready (inventory.go); nil when there is no release.
	Inventory *Inventory `json:"inventory,omitempty"`
	// Test is the outcome of the chart's tests at a revision (watch
	// test.enable): they run once per revision, and a new install or
	// upgrade clears it.
	Test *TestStatus `json:"test,omitempty"`
	// DeployedRelease is the predecessors' release name and manifest,
	// kept only when the watch asks for their status shape
	// (statusCompat: HelmOperator; predecessor.go); nil otherwise, which
	// removes one a predecessor left.
	DeployedRelease *DeployedRelease `json:"deployedRelease,omitempty"`
}

// TestResult is the outcome of a chart's tests.
type TestResult string

// The test results.
const (
	// TestSucceeded: every test hook succeeded (or the chart has none).
	TestSucceeded TestResult = "Succeeded"
	// TestFailed: a test hook failed, or did not finish within the timeout.
	TestFailed TestResult = "Failed"
)

// TestStatus is what a run of the chart's tests found.
type TestStatus struct {
	// Revision is the release revision they ran against.
	Revision int `json:"revision"`
	// Result is Succeeded or Failed.
	Result TestResult `json:"result"`
	// Message names the tests run, or the one that failed and why.
	Message string `json:"message,omitempty"`
	// Time is when they finished.
	Time *metav1.Time `json:"time,omitempty"`
}

// ReleaseStatus summarises the release of a custom resource.
type ReleaseStatus struct {
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
	Revision   int    `json:"revision,omitempty"`
	Chart      string `json:"chart,omitempty"`
	Version    string `json:"version,omitempty"`
	AppVersion string `json:"appVersion,omitempty"`
	// Digest of the chart and values of the current revision.
	Digest string `json:"digest,omitempty"`
	// LastAction is the last Helm action taken (Install, Upgrade, ...).
	LastAction     string       `json:"lastAction,omitempty"`
	LastActionTime *metav1.Time `json:"lastActionTime,omitempty"`
}

// StatusOf reads the status of a custom resource. A status that cannot be
// read (written by something else) is returned empty with the error.
func StatusOf(obj *unstructured.Unstructured) (Status, error) {
	var st Status
	raw, ok := obj.Object["status"].(map[string]any)
	if !ok {
		return st, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &st); err != nil {
		return Status{}, fmt.Errorf("reading .status: %w", err)
	}
	return st, nil
}

// SetStatus writes st as the custom resource's .status.
func SetStatus(obj *unstructured.Unstructured, st Status) error {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		return err
	}
	obj.Object["status"] = raw
	return nil
}

// DeepCopy returns a copy of st that shares nothing with it.
func (st *Status) DeepCopy() *Status {
	out := *st
	out.Conditions = make([]metav1.Condition, len(st.Conditions))
	for i := range st.Conditions {
		st.Conditions[i].DeepCopyInto(&out.Conditions[i])
	}
	if st.Release != nil {
		r := *st.Release
		if r.LastActionTime != nil {
			t := *r.LastActionTime
			r.LastActionTime = &t
		}
		out.Release = &r
	}
	if st.LastFailureTime != nil {
		t := *st.LastFailureTime
		out.LastFailureTime = &t
	}
	if st.NextAttemptTime != nil {
		t := *st.NextAttemptTime
		out.NextAttemptTime = &t
	}
	if st.App != nil {
		out.App = runtime.DeepCopyJSON(st.App)
	}
	if st.Plan != nil {
		out.Plan = st.Plan.deepCopy()
	}
	if st.History != nil { // an Attempt holds values only
		out.History = append([]Attempt(nil), st.History...)
	}
	if st.Inventory != nil {
		inv := *st.Inventory
		if inv.Entries != nil {
			inv.Entries = append([]InventoryEntry(nil), inv.Entries...)
		}
		out.Inventory = &inv
	}
	out.Test = st.Test.DeepCopy()
	if st.DeployedRelease != nil { // strings and an int
		dr := *st.DeployedRelease
		out.DeployedRelease = &dr
	}
	return &out
}

// DeepCopy returns a copy of t (nil for nil).
func (t *TestStatus) DeepCopy() *TestStatus {
	if t == nil {
		return nil
	}
	out := *t
	if t.Time != nil {
		tm := *t.Time
		out.Time = &tm
	}
	return &out
}
