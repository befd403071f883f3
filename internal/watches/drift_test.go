package watches

import (
	"fmt"
	"testing"
)

func TestDriftPolicy(t *testing.T) {
	tests := []struct {
		name   string
		drift  string // the drift field's YAML ("": absent)
		mode   DriftMode
		ignore int // rules kept
	}{
		{"default", "", DriftCorrect, 0},
		{"mode correct", "{mode: correct}", DriftCorrect, 0},
		{"mode warn", "{mode: warn}", DriftWarn, 0},
		{"mode disabled", "{mode: disabled}", DriftDisabled, 0},
		{"alias correct true", "{correct: true}", DriftCorrect, 0},
		{"alias correct false is disabled", "{correct: false}", DriftDisabled, 0},
		{"alias agreeing with mode", "{mode: disabled, correct: false}", DriftDisabled, 0},
		{"ignore rules", `{ignore: [{paths: [/spec/replicas], target: {kind: Deployment}}, {paths: ["/metadata/annotations/a~1b", "/data/x~0y"]}]}`, DriftCorrect, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := "- version: v1\n  kind: Foo\n  chart: chart\n"
			if tt.drift != "" {
				y += "  drift: " + tt.drift + "\n"
			}
			ws, err := Parse([]byte(y), "testdata")
			if err != nil {
				t.Fatal(err)
			}
			p := ws[0].Policy
			if p.DriftMode != tt.mode || len(p.DriftIgnore) != tt.ignore {
				t.Errorf("mode %q, %d ignore rules; want %q, %d", p.DriftMode, len(p.DriftIgnore), tt.mode, tt.ignore)
			}
		})
	}
}

func TestDriftIgnoreMatches(t *testing.T) {
	deployment := []string{"apps", "v1", "Deployment", "ns", "web"}
	tests := []struct {
		target *DriftTarget
		want   bool
	}{
		{nil, true},
		{&DriftTarget{}, true},
		{&DriftTarget{Kind: "Deployment"}, true},
		{&DriftTarget{Kind: "Deployment", Name: "web"}, true},
		{&DriftTarget{Kind: "Deployment", Name: "db"}, false},
		{&DriftTarget{Group: "apps", Version: "v1", Kind: "Deployment"}, true},
		{&DriftTarget{Group: "", Kind: "StatefulSet"}, false},
		{&DriftTarget{Version: "v2"}, false},
		{&DriftTarget{Namespace: "other"}, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%+v", tt.target), func(t *testing.T) {
			r := DriftIgnore{Paths: []string{"/spec/replicas"}, Target: tt.target}
			if got := r.Matches(deployment[0], deployment[1], deployment[2], deployment[3], deployment[4]); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIsJSONPointer(t *testing.T) {
	for p, want := range map[string]bool{
		"/spec/replicas": true, "/a~0b/c~1d": true, "/": true, "/spec/template/spec/containers/0/image": true,
		"": false, "spec/replicas": false, ".spec.replicas": false, "/a~": false, "/a~2": false,
	} {
		if got := IsJSONPointer(p); got != want {
			t.Errorf("IsJSONPointer(%q) = %v, want %v", p, got, want)
		}
	}
}
