package release

import (
	"errors"
	"strings"
	"testing"
)

func TestCorrectDrift(t *testing.T) {
	deleted := func(m *machine) {
		m.run(5)
		m.sc.missing = map[string]bool{"app": true} // the released ConfigMap
	}
	runActionCases(t, []actionCase{
		{name: "restores a deleted object", setup: deleted, want: "Drifted/CorrectDrift",
			events: []string{"Normal DriftCorrected"}, conds: map[string]string{"Released": "True DriftCorrected"},
			lastAction: "CorrectDrift"},
		{name: "a failed correction is not counted", setup: func(m *machine) {
			deleted(m)
			m.sc.writeErr = errors.New("configmaps is forbidden")
		}, want: "Drifted/CorrectDrift!", events: []string{"Warning DriftCorrectionFailed"},
			conds: map[string]string{"Released": "False DriftCorrectionFailed"}, lastAction: "CorrectDrift"},
	})
}

func TestCorrectDriftMessageNamesTheObjects(t *testing.T) {
	m := newMachine(t, nil)
	m.run(5)
	m.sc.missing = map[string]bool{"app": true}
	m.step()
	if c := m.cond("Released"); c.Message != "restored [ConfigMap ns/app (deleted)]" {
		t.Errorf("Released %q", c.Message)
	}
	if got := strings.Join(m.sc.writes, ","); got != "apply ConfigMap app" {
		t.Errorf("writes %s", got)
	}
	expectTrace(t, m.run(3), "InSync")
}
