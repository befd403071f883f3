package watches

import (
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
			w, ok := parseOneField(t, tt.field, tt.errs...)
			if !ok {
				return
			}
			if got := w.CRDPolicy(); got != tt.want {
				t.Errorf("CRDPolicy() = %q, want %q", got, tt.want)
			}
		})
	}
}
