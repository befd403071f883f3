package watches

import (
	"fmt"
	"strings"
)

// DriftMode says what is done about released objects changed outside Helm.
type DriftMode string

// The drift modes.
const (
	// DriftCorrect patches the drifted fields back (deleted objects are
	// re-created). The default.
	DriftCorrect DriftMode = "correct"
	// DriftWarn reports drift in the Drifted condition and changes nothing.
	DriftWarn DriftMode = "warn"
	// DriftDisabled looks for no drift at all.
	DriftDisabled DriftMode = "disabled"
)

// ParseDriftMode checks a drift mode's spelling.
func ParseDriftMode(s string) (DriftMode, error) {
	switch m := DriftMode(s); m {
	case DriftCorrect, DriftWarn, DriftDisabled:
		return m, nil
	}
	return "", fmt.Errorf("%q is not a drift mode: use %s, %s or %s", s, DriftCorrect, DriftWarn, DriftDisabled)
}

// Drift configures drift detection and correction.
type Drift struct {
	// Mode: correct (default), warn or disabled.
	Mode string `json:"mode,omitempty"`
	// Correct is the older spelling: true is mode correct, false mode
	// disabled. Both set must agree.
	Correct *bool `json:"correct,omitempty"`
	// Ignore lists fields that are never drift (neither reported nor
	// reverted), as Flux helm-controller's driftDetection.ignore.
	Ignore []DriftIgnore `json:"ignore,omitempty"`
}

// DriftIgnore is one ignore rule: JSON pointers (RFC 6901) into the
// released objects that Target selects (every object when Target is nil).
type DriftIgnore struct {
	Paths  []string     `json:"paths"`
	Target *DriftTarget `json:"target,omitempty"`
}

// DriftTarget selects released objects; an empty field matches any.
type DriftTarget struct {
	Group     string `json:"group,omitempty"`
	Version   string `json:"version,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// Matches reports whether the rule applies to an object.
func (r DriftIgnore) Matches(group, version, kind, namespace, name string) bool {
	t := r.Target
	if t == nil {
		return true
	}
	match := func(want, got string) bool { return want == "" || want == got }
	return match(t.Group, group) && match(t.Version, version) && match(t.Kind, kind) &&
		match(t.Namespace, namespace) && match(t.Name, name)
}

// IsJSONPointer reports whether p is a JSON pointer (RFC 6901) to a field
// below the root: "/a/b", with "~" only in the escapes "~0" and "~1".
func IsJSONPointer(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return false
		}
	}
	return true
}

// resolve applies the defaults and checks the fields.
func (d *Drift) resolve(add func(field, format string, args ...any)) (DriftMode, []DriftIgnore) {
	if d == nil {
		return DriftCorrect, nil
	}
	mode := DriftCorrect
	if d.Mode != "" {
		m, err := ParseDriftMode(d.Mode)
		if err != nil {
			add("drift.mode", "%v", err)
		}
		mode = m
	}
	if d.Correct != nil {
		alias := DriftDisabled
		if *d.Correct {
			alias = DriftCorrect
		}
		if d.Mode != "" && mode != "" && mode != alias {
			add("drift.correct", "correct: %t (the older spelling of mode: %s) contradicts mode: %s; set only mode", *d.Correct, alias, mode)
		}
		if d.Mode == "" {
			mode = alias
		}
	}
	for i, r := range d.Ignore {
		if len(r.Paths) == 0 {
			add(fmt.Sprintf("drift.ignore[%d].paths", i), "must list at least one JSON pointer (\"/spec/replicas\")")
		}
		for j, p := range r.Paths {
			if !IsJSONPointer(p) {
				add(fmt.Sprintf("drift.ignore[%d].paths[%d]", i, j), "%q is not a JSON pointer (RFC 6901) to a field: it starts with \"/\", as \"/spec/replicas\"", p)
			}
		}
	}
	return mode, d.Ignore
}
