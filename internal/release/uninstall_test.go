package release

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/watches"
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

// TestUninstallEndsTheDeletion: the step that uninstalls the release of a
// deleted resource also ends its deletion (the finalizer may go) when the
// policy waits for no released objects, or the API server answered each
// DELETE with the object gone; when one is only marked for deletion, a
// later step looks.
func TestUninstallEndsTheDeletion(t *testing.T) {
	for _, c := range []struct {
		name      string
		wait      bool
		lingering bool
		finished  bool
	}{
		{"no wait for the objects: finished at once", false, false, true},
		{"no wait, objects still going: finished at once", false, true, true},
		{"waiting, every object answered gone: finished at once", true, false, true},
		{"waiting, objects still going: a later step finishes", true, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newMachine(t, func(p *watches.Policy) { p.UninstallWait = c.wait })
			m.helm.lingering = c.lingering
			m.run(5)
			now := metav1.NewTime(t0)
			m.obj.SetDeletionTimestamp(&now)
			res, err := m.engine.Step(context.Background(), m.target, m.obj, &m.st)
			if err != nil || res.Ran != ActionUninstall || res.ActionErr != nil {
				t.Fatalf("step ran %s (%v, %v), want a successful uninstall", res.Ran, res.ActionErr, err)
			}
			if res.Finished != c.finished {
				t.Errorf("finished = %v, want %v", res.Finished, c.finished)
			}
			if c.finished && res.Requeue != 0 {
				t.Errorf("requeue after %s, want none: the deletion is over", res.Requeue)
			}
			if len(m.history()) != 0 || m.st.Release != nil {
				t.Fatalf("not uninstalled: %v %+v", m.history(), m.st.Release)
			}
			if !c.finished {
				return
			}
			// Nothing is left to do for a later step either.
			res, err = m.engine.Step(context.Background(), m.target, m.obj, &m.st)
			if err != nil || !res.Finished || res.Ran != ActionNone {
				t.Errorf("a later step: finished %v, ran %s (%v); want finished, nothing run", res.Finished, res.Ran, err)
			}
		})
	}
}
