package release

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestUninstall(t *testing.T) {
	failedInstall := func(m *machine) {
		m.setSpec("fail-me")
		m.step()
	}
	deleted := func(m *machine) {
		m.run(5)
		now := metav1.NewTime(t0)
		m.obj.SetDeletionTimestamp(&now)
	}
	runActionCases(t, []actionCase{
		{name: "remediates a failed install", setup: failedInstall, want: "Failed/Uninstall",
			events:   []string{"Normal UninstallSucceeded"},
			conds:    map[string]string{"Released": "False InstallFailed", "Remediated": "True UninstallSucceeded"},
			failures: 1, lastAction: "-",
			counted: map[string]float64{`chartkeeper_remediations_total{action="Uninstall",kind="App",result="success"}`: 1}},
		{name: "uninstalls a deleted resource", setup: deleted, want: "Deleting/Uninstall",
			events: []string{"Normal UninstallSucceeded"},
			conds:  map[string]string{"Released": "False Deleting", "Remediated": ""}, lastAction: "-"},
		{name: "a failed uninstall is not counted", setup: failedInstall,
			fail: map[string]error{"Uninstall": errors.New("uninstall: timed out waiting for hooks")}, want: "Failed/Uninstall!",
			events: []string{"Warning UninstallFailed"}, conds: map[string]string{"Released": "False UninstallFailed", "Remediated": ""},
			failures: 1, lastAction: "Install"},
	})
}
