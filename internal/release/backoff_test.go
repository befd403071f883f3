package release

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// The deletion waits for the released objects of the uninstalled revision
// to go (status.release is gone by then), bounded by uninstall.timeout.
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
