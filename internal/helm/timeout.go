package helm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/release"
)

// BoundGrace is how much longer than an action's timeout its context
// lives: Helm's own timeout (hooks, waits) ends the action first, with an
// error that says what it waited for; the context's deadline is the
// backstop for the rest (a slow API server), which Helm only notices
// between steps.
const BoundGrace = 10 * time.Second

// upgradeCancelDelay is how long after an upgrade returns its bounded
// context is canceled. Helm's Upgrade.RunWithContext (v3.22) starts a
// goroutine that selects between the context's Done and the upgrade's end;
// a cancel right on return can find both ready, and Go picks either: half
// the time the goroutine then writes the successful revision as failed
// ("context canceled"). Waiting until the goroutine has surely run avoids
// it; the context holds nothing but a timer meanwhile.
const upgradeCancelDelay = 5 * time.Second

// Bound returns ctx with the deadline of an action bounded by timeout
// (timeout plus BoundGrace); 0 leaves ctx unbounded.
func Bound(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, timeout+BoundGrace)
}

// TimeoutError is an action that ran out of its time. Its message says how
// long it waited and for what ("timed out after 20s waiting for hook Job
// ns/name (post-install): ..."). It is a failure like any other: it does
// not unwrap to context.DeadlineExceeded, which would make it look
// transient.
type TimeoutError struct {
	After time.Duration
	// Waiting names what the action waited for ("" when unknown).
	Waiting string
	// Err is Helm's error.
	Err error
}

func (e *TimeoutError) Error() string {
	if e.Waiting == "" {
		return fmt.Sprintf("timed out after %s: %v", e.After, e.Err)
	}
	return fmt.Sprintf("timed out after %s waiting for %s: %v", e.After, e.Waiting, e.Err)
}

// IsTimeout reports whether err is Helm running out of an action's time:
// a wait or hook watch that hit its timeout, or the action's context
// deadline.
func IsTimeout(err error) bool {
	if err == nil {
		return false
	}
	var te *TimeoutError
	if errors.As(err, &te) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	// Helm formats the errors of hooks and waits with %s: only the text is left.
	msg := err.Error()
	return strings.Contains(msg, "timed out waiting for the condition") ||
		strings.Contains(msg, "context deadline exceeded")
}

// explainTimeout turns a timed-out action's error into a *TimeoutError
// naming the hook it waited for, read from the stored latest revision
// (Helm records each hook's last run there). Other errors are returned as
// they are.
func (c *Client) explainTimeout(ctx context.Context, err error, timeout time.Duration, name, ns string) error {
	if timeout <= 0 || !IsTimeout(err) {
		return err
	}
	te := &TimeoutError{After: timeout, Err: err}
	if rel, gerr := c.storageFor(ns, storageOf(ctx)).Last(name); gerr == nil {
		te.Waiting = waitedHook(rel)
	}
	return te
}

// waitedHook names the hook a release's last action was waiting for when
// it timed out: of the hooks that did not succeed, the one started last.
func waitedHook(rel *release.Release) string {
	var last *release.Hook
	for _, h := range rel.Hooks {
		ph := h.LastRun.Phase
		if h.LastRun.StartedAt.IsZero() || (ph != release.HookPhaseFailed && ph != release.HookPhaseRunning && ph != release.HookPhaseUnknown) {
			continue
		}
		if last == nil || h.LastRun.StartedAt.After(last.LastRun.StartedAt) {
			last = h
		}
	}
	if last == nil {
		return ""
	}
	events := make([]string, 0, len(last.Events))
	for _, e := range last.Events {
		events = append(events, string(e))
	}
	return fmt.Sprintf("hook %s %s/%s (%s)", last.Kind, rel.Namespace, last.Name, strings.Join(events, ","))
}
