package manifests

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// crdGK is the kind of a CustomResourceDefinition.
var crdGK = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}

// ChartCRDNames returns the names of the CRDs w's chart ships, in crds/
// (subcharts' included) or in its templates rendered with the defaults
// among renders, sorted: the CRDs the CRD step may apply (a templated CRD
// only as the chart's defaults render it).
func ChartCRDNames(w watches.Watch, renders []Rendered) []string {
	dir, templated := chartCRDNamesBySource(w, renders)
	return sortedUnion(dir, templated)
}

// chartCRDNamesBySource returns the names of the CRDs of w's chart's
// crds/ and those its templates render with the defaults, each sorted.
func chartCRDNamesBySource(w watches.Watch, renders []Rendered) (dir, templated []string) {
	var objs []map[string]any
	for _, f := range w.Chart.CRDObjects() {
		objs = append(objs, splitYAML(f.File.Data)...)
	}
	dir = crdNames(objs)
	objs = nil
	for _, r := range renders {
		if r.What == defaultsRender {
			objs = append(objs, r.Objects...)
		}
	}
	return dir, crdNames(objs)
}

// crdNames are the names of the CRDs among objs, sorted, once each.
func crdNames(objs []map[string]any) []string {
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

func sortedUnion(a, b []string) []string {
	out := append(append([]string{}, a...), b...)
	sort.Strings(out)
	return slices.Compact(out)
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

// impersonatedCRDRules splits crdRules for a watch that impersonates: the
// templated CRDs are applied as the release's account (its release role
// gets their rules), the crds/ ones as the operator; the operator reads
// both (is it there, is it Established).
func impersonatedCRDRules(w watches.Watch, renders []Rendered) (operator, release []rbacv1.PolicyRule, note string) {
	dir, templated := chartCRDNamesBySource(w, renders)
	operator, note = crdRules(w, dir)
	release, _ = crdRules(w, templated)
	if len(templated) > 0 && w.CRDPolicy() != watches.CRDPolicySkip {
		operator = append(operator, rbacv1.PolicyRule{APIGroups: []string{crdGK.Group}, Resources: []string{"customresourcedefinitions"}, ResourceNames: templated, Verbs: []string{"get"}})
		note = strings.TrimPrefix(strings.Join([]string{note, "templated CRDs (" + strings.Join(templated, ", ") + ") are applied as the release's account: get on them here, the rest in the release role"}, "; "), "; ")
	}
	return operator, release, note
}
