package manifests

import (
	"fmt"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// crdGK is the kind of a CustomResourceDefinition.
var crdGK = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// ChartCRDNames returns the names of the CRDs w's chart ships, in crds/
// (subcharts' included) or in its templates rendered as renders, sorted.
func ChartCRDNames(w watches.Watch, renders []Rendered) []string {
	var objs []map[string]any
	for _, f := range w.Chart.CRDObjects() {
		objs = append(objs, splitYAML(f.File.Data)...)
	}
	for _, r := range renders {
		objs = append(objs, r.Objects...)
	}
	seen := map[string]bool{}
	var out []string
	for _, o := range objs {
		if gk, name, _ := identity(o); gk == crdGK && name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// crdRules returns what the watch's crds policy needs of the
// customresourcedefinitions of the chart's CRDs (names), and a note. Never
// delete (a CRD outlives every release: deleting it deletes every custom
// resource of its kind), never "*": skip needs nothing; create needs
// create (which cannot be limited by name) and get on the named CRDs (is
// it there, is it Established); create-and-replace also update and patch
// on them.
func crdRules(w watches.Watch, names []string) ([]rbacv1.PolicyRule, string) {
	if len(names) == 0 {
		return nil, ""
	}
	policy := w.CRDPolicy()
	verbs := []string{"get"}
	switch policy {
	case watches.CRDPolicySkip:
		return nil, fmt.Sprintf("the chart ships CRDs (%s); crds.policy skip: no customresourcedefinitions rule (install them yourself)", strings.Join(names, ", "))
	case watches.CRDPolicyCreateAndReplace:
		verbs = append(verbs, "patch", "update")
	}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{crdGK.Group}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"create"}},
		{APIGroups: []string{crdGK.Group}, Resources: []string{"customresourcedefinitions"}, ResourceNames: names, Verbs: verbs},
	}
	return rules, fmt.Sprintf("the chart ships CRDs (%s); crds.policy %s: customresourcedefinitions create, and %s on those names (never delete)",
		strings.Join(names, ", "), policy, strings.Join(verbs, " "))
}
