package release

import (
	"context"
	"strings"
	"testing"
	"time"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// Helm's real rollback fails under the engine (the kube client refuses
// its apply, as the API server refused a PodDisruptionBudget's patch):
// Helm then marks the failed upgrade before it superseded, its own
// revision failed, and rewrites that one's description. Whatever follows,
// no decision rolls back to a revision that failed, the rollback's own
// failure is never rolled back, and once the spec asks for what was
// deployed, nothing is rolled back any more.
func TestMachineFailedRollbackIsNeverRolledBackTo(t *testing.T) {
	m := newMachine(t, func(p *policyOf) { p.MaxHistory = 0 }) // every revision stays to look at
	m.run(5)
	m.setSpec("v2")
	m.run(5) // revision 2, deployed
	m.setSpec("fail-me")
	m.kube.failUpdates = 1 // the first rollback's apply is refused
	expectTrace(t, m.run(2), "OutOfSync/Upgrade!", "Failed/Rollback!")
	if got := strings.Join(m.history(), " "); got != "1:superseded 2:deployed 3:superseded 4:failed" {
		t.Fatalf("history after Helm's failed rollback %s", got)
	}
	if rel, _ := m.store.Get("app", 4); !strings.HasPrefix(rel.Info.Description, `Rollback "app" failed`) {
		t.Fatalf("revision 4's description %q: not what Helm writes of a failed rollback", rel.Info.Description)
	}
	failed := map[int]bool{3: true, 4: true} // revisions that were recorded failed
	var trace []string
	for i := 0; i < 12; i++ {
		m.clock.Step(time.Hour) // past any backoff
		res, err := m.engine.Step(context.Background(), m.target, m.obj, &m.st)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		d := res.Decision
		trace = append(trace, string(d.State)+"/"+string(res.Ran))
		if d.Action == ActionRollback && (failed[d.RollbackTo] || d.RollbackTo == 0) {
			t.Fatalf("step %d rolls back to revision %d, which failed (trace %v; history %v)", i, d.RollbackTo, trace, m.history())
		}
		if res.Ran == ActionNone {
			break
		}
		if res.ActionErr != nil {
			rel, _ := m.store.Last("app")
			failed[rel.Version] = true
		}
	}
	if c := m.cond(api.ConditionStalled); c.Reason != string(api.ReasonRetriesExhausted) {
		t.Errorf("the refused spec ends %v, want Stalled RetriesExhausted (trace %v)", c, trace)
	}
	// The spec asks for revision 2's values again: the release holds them
	// (the last rollback's revision), and nothing more is rolled back.
	m.setSpec("v2")
	got := m.run(5)
	for _, s := range got {
		if strings.Contains(s, "Rollback") {
			t.Errorf("spec back to v2: %v, want no rollback", got)
		}
	}
	if last, _ := m.store.Last("app"); last.Info.Status != helmrelease.StatusDeployed || last.Config["data"] != "v2" {
		t.Errorf("latest revision %d %s with %v, want v2 deployed", last.Version, last.Info.Status, last.Config)
	}
	if c := m.cond(api.ConditionReady); c.Status != "True" {
		t.Errorf("Ready %+v", c)
	}
	// A new spec is an ordinary upgrade.
	m.setSpec("v3")
	expectTrace(t, m.run(5), "OutOfSync/Upgrade", "InSync")
}
