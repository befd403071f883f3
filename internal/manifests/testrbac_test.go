package manifests

import (
	"fmt"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// The role grants what the chart's test hooks need (their kinds: get,
// list, watch, create, delete) only when the watch runs the tests, and the
// notes say so; a chart without test hooks gets nothing for them.
func TestTestRulesOnlyWhenEnabled(t *testing.T) {
	tested, err := loader.Load("../../test/e2e/testdata/charts/testedapp")
	if err != nil {
		t.Fatal(err)
	}
	untested, err := loader.Load("../../test/corpus/certissuer")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		chart  string
		enable bool
		pods   string // the verbs on pods: list alone is to say why a Deployment is not ready (podReasonRules)
		note   string // a note contains it ("": no test note)
	}{
		{"tests on", "tested", true, "[get list watch create delete]", "test.enable: get, list, watch, create, delete on pods"},
		{"tests off", "tested", false, "[list]", ""},
		{"tests on, no test hook", "untested", true, "[list]", "renders no test hook"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := tested
			if tc.chart == "untested" {
				ch = untested
			}
			w := watches.Watch{Group: "golden.chartkeeper.dev", Version: "v1", Kind: "Golden", Chart: ch}
			w.Policy.Test.Enable = tc.enable
			role, notes, err := Role([]watches.Watch{w}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			pods := ""
			for _, r := range role.Rules {
				for _, res := range r.Resources {
					if res == "pods" && r.APIGroups[0] == "" {
						pods = fmt.Sprint(r.Verbs)
					}
				}
			}
			if pods != tc.pods {
				t.Errorf("verbs on pods %q, want %q\n%+v", pods, tc.pods, role.Rules)
			}
			all := strings.Join(notes, "\n")
			if got := strings.Contains(all, "test.enable"); got != (tc.note != "") || !strings.Contains(all, tc.note) {
				t.Errorf("notes %q, want one saying %q", all, tc.note)
			}
		})
	}
}
