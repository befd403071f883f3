package release

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	helmrelease "helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// The deletion waits for the released objects of the uninstalled revision
// to go (status.release is gone by then), bounded by uninstall.timeout,
// when the API server answered their DELETEs with them only marked for
// deletion (finalizers to run).
func TestMachineDeletionWaitsForTheReleasedObjects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		gone   bool          // the ConfigMap goes after the uninstall
		passes time.Duration // time passing before the last step
		done   bool
	}{
		{"waits while the object remains", false, 10 * time.Second, false},
		{"finishes once the object is gone", true, 0, true},
		{"gives up after the uninstall timeout", false, 2 * time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMachine(t, nil)
			m.helm.lingering = true
			m.run(5)
			now := metav1.NewTime(t0)
			m.obj.SetDeletionTimestamp(&now)
			res, err := m.engine.Step(context.Background(), m.target, m.obj, &m.st)
			if err != nil || res.Ran != ActionUninstall || res.Finished {
				t.Fatalf("first deletion step: %+v %v", res, err)
			}
			if len(m.history()) != 0 || m.st.Release != nil {
				t.Fatalf("not uninstalled: %v %+v", m.history(), m.st.Release)
			}
			res, err = m.engine.Step(context.Background(), m.target, m.obj, &m.st)
			if err != nil || res.Finished || res.Requeue != deleteRequeue || !strings.Contains(res.Decision.Message, "waiting for 1 released objects") {
				t.Fatalf("the wait ended while the ConfigMap remains: %+v %v", res, err)
			}
			if tc.gone {
				m.sc.missing = map[string]bool{"app": true}
			}
			m.clock.Step(tc.passes)
			res, err = m.engine.Step(context.Background(), m.target, m.obj, &m.st)
			if err != nil || res.Finished != tc.done {
				t.Fatalf("last step: %+v %v, want finished %v", res, err, tc.done)
			}
		})
	}
}

// A drift correction that keeps failing is retried after the watch's
// backoff, doubling, not on every step; status.nextAttemptTime says when,
// and a success clears the bookkeeping.
func TestMachineFailingCorrectionBacksOff(t *testing.T) {
	m := newMachine(t, func(p *watches.Policy) { p.BackoffInitial, p.BackoffMax = 5*time.Second, 20*time.Second })
	m.run(5)
	m.sc.missing = map[string]bool{"app": true}
	m.sc.writeErr = errors.New("denied by admission policy")
	var ran []string
	for i := 0; i < 40; i++ { // 40 steps, a second apart
		res, err := m.engine.Step(context.Background(), m.target, m.obj, &m.st)
		if err != nil {
			t.Fatal(err)
		}
		if res.Ran != ActionNone {
			ran = append(ran, m.clock.Now().Sub(t0).String())
			if m.st.NextAttemptTime == nil || m.st.BackoffOf != string(ActionCorrectDrift) {
				t.Fatalf("no backoff recorded: %+v", m.st)
			}
		} else if c := m.cond(api.ConditionReleased); c.Reason != string(api.ReasonBackoff) || !strings.Contains(c.Message, "denied by admission policy") {
			t.Fatalf("step %d: Released %+v", i, c)
		}
		m.clock.Step(time.Second)
	}
	// Tried at 0s, then after 5s, 10s, 20s, 20s.
	if got := strings.Join(ran, " "); got != "0s 5s 15s 35s" {
		t.Errorf("corrections tried at %s", got)
	}
	m.sc.writeErr = nil
	m.clock.Step(m.st.NextAttemptTime.Sub(m.clock.Now()))
	expectTrace(t, m.run(5), "Drifted/CorrectDrift", "InSync")
	if m.st.NextAttemptTime != nil || m.st.BackoffOf != "" || m.st.BackoffFailures != 0 {
		t.Errorf("backoff not cleared: %+v", m.st)
	}
}

// What failed (an action or a Go hook phase) is not run again before
// status.nextAttemptTime, for the digest it failed at; anything else is
// decided as usual, and the annotation that skips the BeforeUninstall
// hooks is not held back by their backoff.
func TestDecideBackoffGate(t *testing.T) {
	const want, old = "want", "old"
	deployed := func(o *Observation) { o.Latest = rev(2, helmrelease.StatusDeployed, want) }
	drifted := func(o *Observation) {
		deployed(o)
		o.Drift = []Drift{{Object: object{Namespace: "ns", Name: "web-config"}, Change: DriftDeleted}}
	}
	deleting := func(o *Observation) { o.Deleting, o.Latest = true, rev(2, helmrelease.StatusDeployed, want) }
	failing := func(of string, until time.Duration) Backoff {
		return Backoff{Of: of, Failures: 3, Digest: want, Until: t0.Add(until)}
	}
	tests := []struct {
		name    string
		mod     func(*Observation)
		backoff Backoff
		want    Decision
		hint    bool // the message names the skip annotation
	}{
		{"failed correction waits", drifted, failing("CorrectDrift", 7*time.Second),
			Decision{State: StateDrifted, RequeueAfter: 7 * time.Second, Reason: api.ReasonBackoff}, false},
		{"failed correction retried once due", drifted, failing("CorrectDrift", 0),
			Decision{State: StateDrifted, Action: ActionCorrectDrift, Reason: api.ReasonProgressing}, false},
		{"backoff of another digest does not hold", drifted, Backoff{Of: "CorrectDrift", Failures: 3, Digest: old, Until: t0.Add(time.Minute)},
			Decision{State: StateDrifted, Action: ActionCorrectDrift}, false},
		{"backoff of another action does not hold", func(o *Observation) { o.Latest = rev(2, helmrelease.StatusDeployed, old) },
			failing("CorrectDrift", time.Minute), Decision{State: StateOutOfSync, Action: ActionUpgrade}, false},
		{"failed prune waits", func(o *Observation) {
			deployed(o)
			o.Leftovers = []object{{Namespace: "ns", Name: "web-extra-7"}}
		}, failing("Prune", time.Minute), Decision{State: StateLeftovers, RequeueAfter: time.Minute, Reason: api.ReasonBackoff}, false},
		{"failed unlock waits", func(o *Observation) { o.Latest = rev(3, helmrelease.StatusPendingUpgrade, want) },
			failing("Unlock", 30*time.Second), Decision{State: StateLocked, RequeueAfter: 30 * time.Second, Reason: api.ReasonBackoff}, false},
		{"failed uninstall on deletion waits", deleting, failing("Uninstall", 20*time.Second),
			Decision{State: StateDeleting, RequeueAfter: 20 * time.Second, Reason: api.ReasonBackoff}, false},
		{"failing BeforeUninstall hook holds the deletion", deleting, failing("BeforeUninstall", 20*time.Second),
			Decision{State: StateDeleting, RequeueAfter: 20 * time.Second, Reason: api.ReasonHookFailed}, true},
		{"skip annotation uninstalls at once", func(o *Observation) { deleting(o); o.SkipUninstallHooks = true },
			failing("BeforeUninstall", 20*time.Second), Decision{State: StateDeleting, Action: ActionUninstall, SkipHooks: true}, false},
		{"failing PreRelease hook holds the upgrade", func(o *Observation) { o.Latest = rev(2, helmrelease.StatusDeployed, old) },
			failing("PreRelease", 5*time.Second), Decision{State: StateOutOfSync, RequeueAfter: 5 * time.Second, Reason: api.ReasonHookFailed}, false},
		{"failing PostRelease hook: not Ready, waits", deployed, failing("PostRelease", 5*time.Second),
			Decision{State: StateInSync, RequeueAfter: 5 * time.Second, Reason: api.ReasonHookFailed}, false},
		{"failed upgrade still remediated at once", func(o *Observation) {
			o.Latest, o.PreviousDeployed = rev(5, helmrelease.StatusFailed, want), 3
		}, failing("Upgrade", time.Minute), Decision{State: StateFailed, Action: ActionRollback, RollbackTo: 3, Remediation: true}, false},
		{"failed upgrade retried after the jittered time only", func(o *Observation) {
			o.Latest = rev(4, helmrelease.StatusDeployed, old)
			o.Failures, o.FailedDigest, o.LastFailure = 1, want, t0.Add(-10*time.Second)
		}, Backoff{Of: "Upgrade", Failures: 1, Digest: want, Until: t0.Add(2 * time.Second)},
			Decision{State: StateOutOfSync, RequeueAfter: 2 * time.Second, Reason: api.ReasonBackoff}, false},
		{"an install missing its namespace waits, saying so", func(o *Observation) {},
			Backoff{Of: "Install", Failures: 3, Digest: want, Until: t0.Add(4 * time.Second), Reason: api.ReasonMissingDependency},
			Decision{State: StateAbsent, RequeueAfter: 4 * time.Second, Reason: api.ReasonMissingDependency}, false},
		{"a forbidden upgrade waits, saying so", func(o *Observation) { o.Latest = rev(2, helmrelease.StatusDeployed, old) },
			Backoff{Of: "Upgrade", Failures: 1, Digest: want, Until: t0.Add(4 * time.Second), Reason: api.ReasonForbidden},
			Decision{State: StateOutOfSync, RequeueAfter: 4 * time.Second, Reason: api.ReasonForbidden}, false},
		{"a missing namespace, once its backoff passed, installs again", func(o *Observation) {},
			Backoff{Of: "Install", Failures: 3, Digest: want, Until: t0.Add(-time.Second), Reason: api.ReasonMissingDependency},
			Decision{State: StateAbsent, Action: ActionInstall}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Observation{Now: t0, DesiredDigest: want, Ready: true, ReleasedAt: t0.Add(-time.Minute),
				LastFailureMessage: "CorrectDrift failed: denied", Backoff: tt.backoff}
			tt.mod(&o)
			got := Decide(o, defaultPolicy())
			if got.State != tt.want.State || got.Action != tt.want.Action || got.RollbackTo != tt.want.RollbackTo ||
				got.Remediation != tt.want.Remediation || got.RequeueAfter != tt.want.RequeueAfter || got.SkipHooks != tt.want.SkipHooks {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			if tt.want.Reason != "" && got.Reason != tt.want.Reason {
				t.Errorf("reason %q, want %q (%s)", got.Reason, tt.want.Reason, got.Message)
			}
			if got.RequeueAfter > 0 && got.Action == ActionNone && !strings.Contains(got.Message, "last failure: CorrectDrift failed: denied") {
				t.Errorf("a backoff says why the last attempt failed: %q", got.Message)
			}
			if hint := strings.Contains(got.Message, api.AnnotationSkipUninstallHooks); hint != tt.hint {
				t.Errorf("message %q names the annotation: %v, want %v", got.Message, hint, tt.hint)
			}
		})
	}
}
