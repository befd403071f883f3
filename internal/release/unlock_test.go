package release

import (
	"errors"
	"strings"
	"testing"
	"time"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

func TestUnlock(t *testing.T) {
	interrupted := func(m *machine) {
		m.run(5)
		rel, err := m.store.Last("app")
		if err != nil {
			m.t.Fatal(err)
		}
		rel.Info.Status = helmrelease.StatusPendingInstall
		if err := m.store.Update(rel); err != nil {
			m.t.Fatal(err)
		}
	}
	runActionCases(t, []actionCase{
		{name: "marks an interrupted revision failed", setup: interrupted, want: "Locked/Unlock",
			events: []string{"Warning Unlocked"}, conds: map[string]string{"Released": "False Pending", "Ready": "False Progressing"},
			lastAction: "Unlock"},
		{name: "a failed unlock is not counted", setup: interrupted,
			fail: map[string]error{"Unlock": errors.New("secrets is forbidden")}, want: "Locked/Unlock!",
			events: []string{"Warning UnlockFailed"}, conds: map[string]string{"Released": "False UnlockFailed"}, lastAction: "Install"},
	})
}

// A pending revision written more recently than the action timeout may be
// an operation still in flight (a person's helm upgrade, another
// operator's): it is left alone, Locked Pending saying it waits, until the
// timeout has passed since it was last written; then it is unlocked.
func TestPendingYoungerThanTimeoutIsNotUnlocked(t *testing.T) {
	m := newMachine(t, func(p *watches.Policy) { p.Timeout = time.Minute })
	m.run(5)
	m.setSpec("v2")
	m.run(5)
	rel, err := m.store.Last("app")
	if err != nil {
		t.Fatal(err)
	}
	rel.Info.Status = helmrelease.StatusPendingUpgrade
	if err := m.store.Update(rel); err != nil {
		t.Fatal(err)
	}
	m.sc.modifiedAt = map[int]time.Time{rel.Version: m.clock.Now().Add(-20 * time.Second)}
	m.setSpec("v3")

	res, err := m.engine.Step(t.Context(), m.target, m.obj, &m.st)
	if err != nil || res.Ran != ActionNone || res.Decision.State != StateLocked || res.Requeue != 40*time.Second {
		t.Fatalf("a young pending revision: %+v %v; want Locked, no action, requeue in 40s", res, err)
	}
	if c := m.cond(api.ConditionReady); c.Reason != string(api.ReasonPending) || !strings.Contains(c.Message, "waiting for its operation to finish") {
		t.Errorf("Ready %+v: want Pending saying it waits", c)
	}
	if got, _ := m.store.Last("app"); got.Info.Status != helmrelease.StatusPendingUpgrade {
		t.Errorf("the revision is %s: it was touched", got.Info.Status)
	}
	m.clock.Step(41 * time.Second)
	expectTrace(t, m.run(6), "Locked/Unlock", "Failed/Rollback", "OutOfSync/Upgrade", "InSync")
}
