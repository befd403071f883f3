package release

import (
	"errors"
	"strings"
	"testing"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
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

// The drift mode, from the watch or the resource's annotation: warn
// reports (Drifted True) and writes nothing (the deleted object is not
// Ready, so neither is the resource: Unready, not Drifted); disabled
// looks for nothing; an invalid annotation is named (Drifted Unknown) and
// the watch's mode applies.
func TestDriftModes(t *testing.T) {
	tests := []struct {
		name       string
		watch      watches.DriftMode
		annotation string // "": none
		trace      string
		writes     string
		drifted    string // "Status Reason" of Drifted ("": absent)
	}{
		{"correct", watches.DriftCorrect, "", "Drifted/CorrectDrift", "apply ConfigMap app", ""},
		{"warn by the watch", watches.DriftWarn, "", "Unready", "", "True DriftDetected"},
		{"warn by the annotation", watches.DriftCorrect, "warn", "Unready", "", "True DriftDetected"},
		{"correct by the annotation", watches.DriftWarn, "correct", "Drifted/CorrectDrift", "apply ConfigMap app", ""},
		{"disabled by the watch", watches.DriftDisabled, "", "Unready", "", ""},
		{"disabled by the annotation", watches.DriftCorrect, "disabled", "Unready", "", ""},
		{"invalid annotation: the watch's mode", watches.DriftCorrect, "sometimes", "Drifted/CorrectDrift", "apply ConfigMap app", "Unknown InvalidDriftMode"},
		{"invalid annotation, warn watch", watches.DriftWarn, "nope", "Unready", "", "True DriftDetected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, func(p *watches.Policy) { p.DriftMode = tt.watch })
			if tt.annotation != "" {
				m.obj.SetAnnotations(map[string]string{api.AnnotationDrift: tt.annotation})
			}
			m.run(5)
			m.sc.writes = nil
			m.sc.missing = map[string]bool{"app": true}
			if got := m.step(); got != tt.trace {
				t.Errorf("step %s, want %s", got, tt.trace)
			}
			if got := strings.Join(m.sc.writes, ","); got != tt.writes {
				t.Errorf("writes %q, want %q", got, tt.writes)
			}
			c := m.cond(api.ConditionDrifted)
			if got := strings.TrimSpace(string(c.Status) + " " + c.Reason); got != tt.drifted {
				t.Errorf("Drifted %q (%s), want %q", got, c.Message, tt.drifted)
			}
			if tt.drifted == "True DriftDetected" && !strings.Contains(c.Message, "ConfigMap ns/app (deleted)") {
				t.Errorf("Drifted message %q", c.Message)
			}
			if tt.drifted == "Unknown InvalidDriftMode" && !strings.Contains(c.Message, `"sometimes"`) {
				t.Errorf("Drifted message %q", c.Message)
			}
			m.checkReasons()
		})
	}
}
