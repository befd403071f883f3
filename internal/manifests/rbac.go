package manifests

import (
	"fmt"
	"slices"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// releasedVerbs are what Helm and drift correction do to released objects.
var releasedVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// Samples are custom resources' specs by group, version and kind, rendered
// besides a chart's defaults to find the kinds it can release (optional
// parts off by default). Samples of a kind's older versions are not
// rendered: they follow the older schema.
type Samples map[schema.GroupVersionKind][]map[string]any

// Role returns the ClusterRole the operator needs for these watches: its
// custom resources, the ConfigMaps and Secrets valuesFrom reads (get,
// list, watch), Helm's release Secrets, Events, the Pods and claims that
// say why a workload is not ready (podReasonRules), and every kind the
// charts render with their default values, with each sample's spec and
// with each boolean default flipped, each with exact verbs; what the
// charts' own Roles and ClusterRoles grant (chartGrants); CRDs when a
// chart ships crds/; what the chart's test hooks need when the watch runs
// them (testRules); plus the extra rules of the Go hooks (hookRules). No
// rule names "*". The notes say, per kind, which rules the charts' RBAC
// added and what could not be resolved.
func Role(ws []watches.Watch, samples Samples, hookRules []rbacv1.PolicyRule) (*rbacv1.ClusterRole, []string, error) {
	rs := newRuleSet()
	var notes []string
	for _, w := range ws {
		plural := Plural(w.Kind)
		rs.add(w.Group, plural, "get", "list", "watch", "update", "patch")
		rs.add(w.Group, plural+"/status", "get", "update", "patch")
		rs.add(w.Group, plural+"/finalizers", "update")
		for _, r := range w.ValuesFrom { // read through a watch of each object named
			rs.add("", Plural(string(r.Kind)), "get", "list", "watch")
		}
		renders, err := Render(w, samples)
		if err != nil {
			return nil, nil, err
		}
		renders = append(renders, renderToggles(w)...)
		var ns []string
		if w.Impersonate != nil {
			// The account releases, the operator only watches what it
			// released (caches, readiness) and impersonates the account.
			for _, gk := range releasedKinds(renders) {
				rs.add(gk.Group, Plural(gk.Kind), "get", "list", "watch")
			}
			rs.addRule(impersonateRule(w))
			ns = append(ns, fmt.Sprintf("releases run as ServiceAccount %q: what they need is rbac/release/%s, to bind to that account in each namespace", w.Impersonate.ServiceAccount, ReleaseRoleFile(w)))
		} else {
			more, err := releaseRules(rs, w, renders)
			if err != nil {
				return nil, nil, err
			}
			ns = append(ns, more...)
		}
		podReasonRules(rs, renders)
		crdGrants, crdNote := crdRules(w, ChartCRDNames(w, renders))
		if w.Impersonate != nil {
			crdGrants, _, crdNote = impersonatedCRDRules(w, renders)
		}
		for _, g := range crdGrants {
			rs.addRule(g)
		}
		if crdNote != "" {
			ns = append(ns, crdNote)
		}
		for _, n := range ns {
			notes = append(notes, w.Kind+": "+n)
		}
	}
	for _, r := range hookRules {
		if slices.Contains(r.Verbs, "*") || slices.Contains(r.Resources, "*") || slices.Contains(r.APIGroups, "*") {
			return nil, nil, fmt.Errorf("a Go hook asks for %v: name the groups, resources and verbs it needs, not *", r)
		}
		rs.addRule(r)
	}
	// Helm's release storage; an uninstall deletes a release's history in one request.
	rs.add("", "secrets", slices.Concat(releasedVerbs, []string{"deletecollection"})...)
	rs.add("", "events", "create", "patch")     // leader election's (client-go's recorder counts repeats with a patch)
	rs.add("events.k8s.io", "events", "create") // the engine's Events (internal/recorder) are created, never patched

	role := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: "manager-role"},
		Rules:      rs.rules(),
	}
	return role, notes, nil
}

// releaseRules adds to rs what releasing w's chart takes: every kind it
// renders with all the verbs Helm and drift correction use, what the
// chart's own Roles and ClusterRoles grant (chartGrants), what its test
// hooks need when the watch runs them (testRules). The notes say what the
// chart's RBAC added and what could not be resolved.
func releaseRules(rs *ruleSet, w watches.Watch, renders []Rendered) ([]string, error) {
	for _, gk := range releasedKinds(renders) {
		rs.add(gk.Group, Plural(gk.Kind), releasedVerbs...)
	}
	grants, ns, err := chartGrants(w, renders)
	if err != nil {
		return nil, err
	}
	for _, g := range grants {
		rs.addRule(g)
	}
	testKinds, testNote := testRules(w, renders)
	for _, gk := range testKinds {
		rs.add(gk.Group, Plural(gk.Kind), testVerbs...)
	}
	if testNote != "" {
		ns = append(ns, testNote)
	}
	return ns, nil
}

// releasedKinds are the kinds the renders hold, CRDs left out (never
// released: the crds policy's, crdRules).
func releasedKinds(renders []Rendered) []schema.GroupKind {
	var objs []map[string]any
	for _, r := range renders {
		objs = append(objs, r.Objects...)
	}
	return slices.DeleteFunc(kinds(objs), func(gk schema.GroupKind) bool { return gk == crdGK })
}

// ruleSet collects rules: verbs by group and resource, merged; rules with
// resourceNames or nonResourceURLs kept whole.
type ruleSet struct {
	byGroup map[string]map[string][]string // group -> resource -> verbs
	extra   []rbacv1.PolicyRule
}

func newRuleSet() *ruleSet { return &ruleSet{byGroup: map[string]map[string][]string{}} }

func (rs *ruleSet) add(group, resource string, verbs ...string) {
	if rs.byGroup[group] == nil {
		rs.byGroup[group] = map[string][]string{}
	}
	rs.byGroup[group][resource] = union(rs.byGroup[group][resource], verbs)
}

func (rs *ruleSet) addRule(r rbacv1.PolicyRule) {
	if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
		rs.extra = append(rs.extra, r)
		return
	}
	for _, g := range r.APIGroups {
		for _, res := range r.Resources {
			rs.add(g, res, r.Verbs...)
		}
	}
}

// rules returns the set as short rules: one per distinct verb set within
// a group, then the whole rules no other covers.
func (rs *ruleSet) rules() []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, g := range sortedKeys(rs.byGroup) {
		byVerbs := map[string][]string{}
		var order []string
		for _, res := range sortedKeys(rs.byGroup[g]) {
			k := fmt.Sprint(rs.byGroup[g][res])
			if _, ok := byVerbs[k]; !ok {
				order = append(order, k)
			}
			byVerbs[k] = append(byVerbs[k], res)
		}
		for _, k := range order {
			res := byVerbs[k]
			out = append(out, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: res, Verbs: rs.byGroup[g][res[0]]})
		}
	}
	return append(out, uncovered(rs.extra, rs.byGroup)...)
}

// uncovered returns rules, sorted and without duplicates, less those whose
// every resource byGroup already grants with all their verbs.
func uncovered(rules []rbacv1.PolicyRule, byGroup map[string]map[string][]string) []rbacv1.PolicyRule {
	seen := map[string]bool{}
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		r.Verbs = union(nil, r.Verbs)
		k := ruleKey(r)
		if seen[k] || (len(r.NonResourceURLs) == 0 && covered(r, byGroup)) {
			continue
		}
		seen[k] = true
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return ruleKey(out[i]) < ruleKey(out[j]) })
	return out
}

func covered(r rbacv1.PolicyRule, byGroup map[string]map[string][]string) bool {
	for _, g := range r.APIGroups {
		for _, res := range r.Resources {
			for _, v := range r.Verbs {
				if !slices.Contains(byGroup[g][res], v) {
					return false
				}
			}
		}
	}
	return true
}

// kinds returns the kinds of objects, sorted.
func kinds(objs []map[string]any) []schema.GroupKind {
	seen := map[schema.GroupKind]bool{}
	for _, o := range objs {
		api, _ := o["apiVersion"].(string)
		kind, _ := o["kind"].(string)
		gv, err := schema.ParseGroupVersion(api)
		if kind == "" || err != nil {
			continue
		}
		seen[schema.GroupKind{Group: gv.Group, Kind: kind}] = true
	}
	out := make([]schema.GroupKind, 0, len(seen))
	for gk := range seen {
		out = append(out, gk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func isManifest(name string) bool {
	n := len(name)
	return (n > 5 && name[n-5:] == ".yaml") || (n > 4 && name[n-4:] == ".yml")
}

func union(a, b []string) []string {
	set := map[string]bool{}
	for _, v := range append(append([]string{}, a...), b...) {
		set[v] = true
	}
	// Keep the conventional verb order.
	var out []string
	for _, v := range []string{"get", "list", "watch", "create", "update", "patch", "delete"} {
		if set[v] {
			out = append(out, v)
			delete(set, v)
		}
	}
	return append(out, sortedKeys(set)...)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
