package watches

import (
	"strings"
	"testing"
)

func TestCRDPolicyLoads(t *testing.T) {
	tests := []struct {
		name, field, want string
		errs              []string
	}{
		{name: "unset is create", want: CRDPolicyCreate},
		{name: "empty crds is create", field: "  crds: {}\n", want: CRDPolicyCreate},
		{name: "skip", field: "  crds: {policy: skip}\n", want: CRDPolicySkip},
		{name: "create", field: "  crds: {policy: create}\n", want: CRDPolicyCreate},
		{name: "create-and-replace", field: "  crds: {policy: create-and-replace}\n", want: CRDPolicyCreateAndReplace},
		{name: "unknown policy", field: "  crds: {policy: replace}\n", errs: []string{`field "crds.policy"`, `"replace" is not a CRD policy`, `"skip"`, `"create-and-replace"`}},
		{name: "unknown field", field: "  crds: {polcy: skip}\n", errs: []string{`entry 0 (kind "Foo")`, "polcy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := Parse([]byte("- version: v1\n  kind: Foo\n  chart: chart\n"+tt.field), "testdata")
			if len(tt.errs) > 0 {
				if err == nil {
					t.Fatal("loaded")
				}
				for _, want := range tt.errs {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := ws[0].CRDPolicy(); got != tt.want {
				t.Errorf("CRDPolicy() = %q, want %q", got, tt.want)
			}
		})
	}
}
