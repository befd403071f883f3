package api

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// History bounds (docs/status-history.md): status.history keeps the last
// MaxHistory attempts, newest first, each message cut to
// MaxAttemptMessage bytes, so the history stays under about 4 KiB
// whatever happens to the release.
const (
	MaxHistory        = 5
	MaxAttemptMessage = 512
)

// AttemptResult is how an attempt ended.
type AttemptResult string

// The results of an attempt.
const (
	AttemptSucceeded AttemptResult = "Succeeded"
	AttemptFailed    AttemptResult = "Failed"
)

// Attempt is one action the release engine ran on the release (install,
// upgrade, rollback, uninstall, unlock, drift correction, prune), as
// status.history records it. An error before anything was tried (the API
// server unreachable, retried as it is) is no attempt, nor is a failing Go
// hook (the action did not run; the Ready condition says so).
type Attempt struct {
	// Action is the action: Install, Upgrade, Rollback, Uninstall,
	// Unlock, CorrectDrift or Prune (as status.release.lastAction).
	Action string `json:"action"`
	// Revision is the release revision the action made (install, upgrade,
	// rollback) or acted on (uninstall, unlock, drift correction, prune);
	// 0 when nothing was stored (values the chart refused, say).
	Revision int `json:"revision,omitempty"`
	// Chart and ChartVersion name the chart the action applied (install,
	// upgrade) or the one of the revision it acted on.
	Chart        string `json:"chart,omitempty"`
	ChartVersion string `json:"chartVersion,omitempty"`
	// Digest fingerprints the chart and values, as the revision's
	// chartkeeper.dev/digest label and status.release.digest do.
	Digest string `json:"digest,omitempty"`
	// ValuesDigest fingerprints the values alone (install, upgrade): two
	// attempts with the same one applied the same values.
	ValuesDigest string `json:"valuesDigest,omitempty"`
	// StartedAt and FinishedAt bound the action.
	StartedAt  metav1.Time `json:"startedAt"`
	FinishedAt metav1.Time `json:"finishedAt"`
	// Result is how it ended; Reason says more, as the Released condition
	// the attempt wrote did (InstallSucceeded, UpgradeFailed, ChartError,
	// MissingDependency, ...); later, a readiness timeout turns the
	// attempt that made the revision Failed, ReadinessTimeout.
	Result AttemptResult `json:"result"`
	Reason Reason        `json:"reason"`
	// Message says what happened (secret values redacted, at most
	// MaxAttemptMessage bytes).
	Message string `json:"message,omitempty"`
}
