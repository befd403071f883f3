package release

import (
	"errors"
	"testing"
)

func TestRollback(t *testing.T) {
	failedUpgrade := func(m *machine) {
		m.run(5)
		m.setSpec("fail-me")
		m.step()
	}
	runActionCases(t, []actionCase{
		{name: "rolls a failed upgrade back", setup: failedUpgrade, want: "Failed/Rollback",
			events:   []string{"Normal RollbackSucceeded"},
			conds:    map[string]string{"Released": "False UpgradeFailed", "Remediated": "True RollbackSucceeded", "Ready": "False Progressing"},
			failures: 1, lastAction: "Rollback",
			counted: map[string]float64{`chartkeeper_remediations_total{action="Rollback",kind="App",result="success"}`: 1}},
		{name: "a failed rollback counts toward remediation", setup: failedUpgrade,
			fail: map[string]error{"Rollback": errors.New("no revision 1 to roll back to")}, want: "Failed/Rollback!",
			events: []string{"Warning RollbackFailed"}, conds: map[string]string{"Released": "False RollbackFailed", "Remediated": ""},
			failures: 2, lastAction: "Upgrade",
			counted: map[string]float64{`chartkeeper_remediations_total{action="Rollback",kind="App",result="failure"}`: 1,
				`chartkeeper_action_failures_total{action="Rollback",kind="App"}`: 1}},
		// Helm's own rollback fails (its apply is refused): Helm stores the
		// rollback's revision failed and marks the failed upgrade superseded.
		{name: "Helm's failed rollback is recorded as its revision", setup: func(m *machine) { failedUpgrade(m); m.kube.failUpdates = 1 },
			want:   "Failed/Rollback!",
			events: []string{"Warning RollbackFailed"}, conds: map[string]string{"Released": "False RollbackFailed", "Remediated": ""},
			failures: 2, lastAction: "Rollback",
			counted: map[string]float64{`chartkeeper_remediations_total{action="Rollback",kind="App",result="failure"}`: 1,
				`chartkeeper_action_failures_total{action="Rollback",kind="App"}`: 1}},
	})
}
