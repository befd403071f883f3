package release

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

func TestMachineReadinessTimeoutRollsBack(t *testing.T) {
	m := newMachine(t, nil)
	m.run(5)
	// The Deployment revision 2 adds never becomes available (its
	// readiness, as read at resourceVersion 1, is remembered not Current).
	m.engine.ready.set("ns/app", types.UID("uid-app"), readyAt{rv: "1", current: false, why: "Deployment app: InProgress: 0 of 1 available"})
	m.setValues(map[string]any{"data": "v2", "deploy": true})
	expectTrace(t, m.run(3), "OutOfSync/Upgrade", "Unready")
	if c := m.cond(api.ConditionReady); c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "0 of 1 available") {
		t.Errorf("Ready %+v", c)
	}
	m.clock.Step(6 * time.Minute)
	expectTrace(t, m.run(3), "Unready/Rollback", "OutOfSync")
	if c := m.cond(api.ConditionRemediated); c.Status != metav1.ConditionTrue {
		t.Errorf("Remediated %+v", c)
	}
}

// Upgrades not ready in time count toward the same retries however often
// they were released: a successful upgrade does not reset the count (a
// revision found in sync does), so the upgrade-rollback cycle stalls once
// the retries are spent instead of going on for ever.
func TestMachineReadinessTimeoutsStall(t *testing.T) {
	m := newMachine(t, nil) // retries: 2, backoff 10s doubling
	m.run(5)
	m.engine.ready.set("ns/app", types.UID("uid-app"), readyAt{rv: "1", current: false, why: "Deployment app: InProgress: 0 of 1 available"})
	m.setValues(map[string]any{"data": "v2", "deploy": true})
	for i, then := range []string{"OutOfSync", "OutOfSync", "Stalled"} {
		expectTrace(t, m.run(3), "OutOfSync/Upgrade", "Unready")
		m.clock.Step(6 * time.Minute)
		expectTrace(t, m.run(3), "Unready/Rollback", then)
		if m.st.Failures != i+1 {
			t.Fatalf("attempt %d: failures %d", i+1, m.st.Failures)
		}
		m.clock.Step(time.Minute) // the backoff
	}
	expectTrace(t, m.run(3), "Stalled")
	if c := m.cond(api.ConditionStalled); c.Reason != string(api.ReasonRetriesExhausted) {
		t.Errorf("Stalled %+v", c)
	}
}
