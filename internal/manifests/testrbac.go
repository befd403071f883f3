package manifests

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// testVerbs are what a run of a chart's tests does to its test hooks'
// objects: Helm deletes one an earlier run left (and waits until it is
// gone), creates it and watches it until it completes; chartkeeper then
// reads a Pod that did not succeed and deletes every test hook.
var testVerbs = []string{"get", "list", "watch", "create", "delete"}

// testRules returns the kinds of the chart's test hooks (helm.sh/hook:
// test, as rendered in renders), which need testVerbs, when the watch runs
// the tests (test.enable); none otherwise. CRDs are never test objects
// here (Helm never deletes a CRD hook). The note says what was added, or
// that the chart renders no test hook.
func testRules(w watches.Watch, renders []Rendered) ([]schema.GroupKind, string) {
	if !w.Policy.Test.Enable {
		return nil, ""
	}
	var objs []map[string]any
	for _, r := range renders {
		objs = append(objs, r.Tests...)
	}
	var out []schema.GroupKind
	var names []string
	for _, gk := range kinds(objs) {
		if gk == crdGK {
			continue
		}
		out = append(out, gk)
		names = append(names, Plural(gk.Kind))
	}
	if len(out) == 0 {
		return nil, "test.enable: the chart renders no test hook (helm.sh/hook: test) with its defaults or samples: no rule added for its tests"
	}
	return out, fmt.Sprintf("test.enable: %s on %s, for the chart's test hooks", strings.Join(testVerbs, ", "), strings.Join(names, ", "))
}
