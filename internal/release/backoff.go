package release

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// The Go hook phases, as named in status.backoffOf.
const (
	phaseTranslate       = "Translate"
	phasePreRelease      = "PreRelease"
	phasePostRelease     = "PostRelease"
	phaseBeforeUninstall = "BeforeUninstall"
)

// backoffJitter is the jitter factor of every backoff: a wait d becomes a
// random wait in [d, d*(1+backoffJitter)), so that resources failing
// together do not retry together.
const backoffJitter = 0.2

// skipHooksHint ends the message of a BeforeUninstall hook that fails.
const skipHooksHint = `; to delete without the BeforeUninstall hooks, annotate the resource ` +
	api.AnnotationSkipUninstallHooks + `: "true"`

// Backoff is a failure waiting out its backoff, from the status: what
// failed (an action, or a Go hook phase), how many times in a row for the
// desired digest Digest, and the time before which it is not tried again.
type Backoff struct {
	Of       string
	Failures int
	Digest   string
	Until    time.Time
	// Reason reports the wait instead of Backoff when set
	// (MissingDependency, Forbidden: what is missing).
	Reason api.Reason
}

// due names what a decision would run: its action and the hook phase
// before it, or the PostRelease hooks of a step without an action.
func due(o Observation, d Decision) []string {
	switch d.Action {
	case ActionNone:
		if d.State == StateInSync || d.State == StateUnready {
			return []string{phasePostRelease}
		}
		return nil
	case ActionInstall, ActionUpgrade:
		return []string{string(d.Action), phasePreRelease}
	case ActionUninstall:
		if o.Deleting && !d.SkipHooks {
			return []string{string(d.Action), phaseBeforeUninstall}
		}
	}
	return []string{string(d.Action)}
}

// backoffGate turns a decision into a wait while what it would run failed
// and its backoff has not passed (for the same desired digest).
func backoffGate(o Observation, d Decision) Decision {
	b := o.Backoff
	if b.Of == "" || b.Digest != o.DesiredDigest || !o.Now.Before(b.Until) || !slices.Contains(due(o, d), b.Of) {
		return d
	}
	left := b.Until.Sub(o.Now)
	g := Decision{State: d.State, RequeueAfter: left, Reason: api.ReasonBackoff, SkipHooks: d.SkipHooks, BackingOff: true}
	what := b.Of
	if b.Of == phaseTranslate || b.Of == phasePreRelease || b.Of == phasePostRelease || b.Of == phaseBeforeUninstall {
		g.Reason, what = api.ReasonHookFailed, b.Of+" hooks"
	}
	if b.Reason != "" {
		g.Reason = b.Reason
	}
	g.Message = fmt.Sprintf("%s failed %d times in a row; next attempt in %s", what, b.Failures, left.Round(time.Second))
	if o.LastFailureMessage != "" {
		g.Message += "; last failure: " + o.LastFailureMessage
	}
	if b.Of == phaseBeforeUninstall {
		g.Message += skipHooksHint
	}
	return g
}

// backoffOf reads the backoff bookkeeping of a status.
func backoffOf(st *api.Status) Backoff {
	b := Backoff{Of: st.BackoffOf, Failures: st.BackoffFailures, Digest: st.BackoffDigest}
	for _, r := range dependencyReasons {
		if string(r) == st.BackoffReason {
			b.Reason = r
		}
	}
	if st.NextAttemptTime != nil {
		b.Until = st.NextAttemptTime.Time
	}
	return b
}

// backOff records a failure of what (an action or a hook phase) and why,
// and returns how long it waits: the watch's backoff for its consecutive
// failures (counted, when the failure counts toward remediation, else
// status.backoffFailures), with jitter. status.nextAttemptTime holds when.
func (s *step) backOff(what, why string, counted int) time.Duration {
	st := s.st
	if st.BackoffOf != what || st.BackoffDigest != s.d.digest {
		st.BackoffFailures = 0
	}
	st.BackoffOf, st.BackoffDigest, st.BackoffReason = what, s.d.digest, ""
	st.BackoffFailures++
	if counted > 0 {
		st.BackoffFailures = counted
	}
	left := s.e.jitter(s.t.Watch.Policy.Backoff(st.BackoffFailures))
	next := metav1.NewTime(s.e.clock.Now().Add(left))
	st.NextAttemptTime = &next
	st.LastFailureMessage = s.failureMessage(why)
	return left
}

// backoffCleared drops the backoff bookkeeping when what failed is among
// what just succeeded.
func (s *step) backoffCleared(what ...string) {
	st := s.st
	if st.BackoffOf == "" || !slices.Contains(what, st.BackoffOf) {
		return
	}
	st.BackoffOf, st.BackoffDigest, st.BackoffFailures, st.NextAttemptTime, st.BackoffReason = "", "", 0, nil, ""
}

// jitterBackoff is the default jitter (see backoffJitter).
func jitterBackoff(d time.Duration) time.Duration { return wait.Jitter(d, backoffJitter) }

// phaseOf names a hook phase in status.backoffOf.
func phaseOf(p hookPhase) string {
	switch p {
	case preReleaseHooks:
		return phasePreRelease
	case beforeUninstallHooks:
		return phaseBeforeUninstall
	}
	return ""
}
