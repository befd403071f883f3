package manifests

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

const rbacGroup = "rbac.authorization.k8s.io"

// chartGrants returns what the operator must hold to release the RBAC
// objects in renders, because the API server lets nobody grant what it
// does not hold (its escalation check): the rules of every Role and
// ClusterRole (resourceNames and nonResourceURLs kept; a namespaced Role's
// rules cluster-wide, as the release namespace is any), and `bind` on each
// role a binding names that the chart does not create. A rule naming "*"
// is refused. The notes say what was added and what cannot be resolved.
func chartGrants(w watches.Watch, renders []Rendered) ([]rbacv1.PolicyRule, []string, error) {
	var rules []rbacv1.PolicyRule
	var notes []string
	note := func(format string, args ...any) {
		if n := fmt.Sprintf(format, args...); !slices.Contains(notes, n) {
			notes = append(notes, n)
		}
	}
	for _, r := range renders {
		roles := map[string]*rbacv1.ClusterRole{} // "Kind/name" -> role (a Role's rules in a ClusterRole)
		var order []string
		for _, o := range r.Objects {
			gk, name, _ := identity(o)
			if gk.Group != rbacGroup || (gk.Kind != "Role" && gk.Kind != "ClusterRole") {
				continue
			}
			role := &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o, role); err != nil {
				return nil, nil, fmt.Errorf("%s: chart %s (%s): %s %s: %w", w, w.Chart.Name(), r.What, gk.Kind, name, err)
			}
			for i, rule := range role.Rules {
				if star := starOf(rule); star != "" {
					return nil, nil, fmt.Errorf("%s: chart %s (%s): %s %s rule %d grants %s %q: chartkeeper never grants \"*\" (the operator would have to hold it); "+
						"turn that role off with the watch's overrideValues, or name the groups, resources and verbs in the chart", w, w.Chart.Name(), r.What, gk.Kind, name, i+1, star, "*")
				}
			}
			roles[gk.Kind+"/"+name] = role
			order = append(order, gk.Kind+"/"+name)
			for _, rule := range role.Rules {
				if names := releaseNamed(rule.ResourceNames); len(names) > 0 {
					note("%s %s names %s after the release: the rule is granted for every name of %s", gk.Kind, name, strings.Join(names, ", "), strings.Join(rule.Resources, ", "))
					rule.ResourceNames = nil
				}
				rules = append(rules, rule)
			}
			if len(role.Rules) > 0 {
				note("%s %s: its %d rule(s) added, as the API server lets only who holds them create it", gk.Kind, name, len(role.Rules))
			}
		}
		for _, key := range order {
			role := roles[key]
			if role.AggregationRule == nil {
				continue
			}
			matched, err := aggregated(role.AggregationRule, roles)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: chart %s (%s): %s: %w", w, w.Chart.Name(), r.What, key, err)
			}
			note("WARNING: %s (%s) has an aggregationRule: the API server lets only cluster-admin create it (or who may `escalate` clusterroles, which with `update` amounts to cluster-admin); "+
				"the generated role does not grant that, so a release that renders it fails Forbidden: leave it off in the values, or grant `escalate` yourself", key, r.What)
			if len(matched) == 0 {
				note("%s aggregates ClusterRoles the chart does not create: their rules are not granted; binding it fails unless the operator holds them", key)
			} else {
				note("%s aggregates %s: their rules are granted", key, strings.Join(matched, ", "))
			}
		}
		for _, o := range r.Objects {
			gk, name, _ := identity(o)
			if gk.Group != rbacGroup || (gk.Kind != "RoleBinding" && gk.Kind != "ClusterRoleBinding") {
				continue
			}
			ref, _ := o["roleRef"].(map[string]any)
			kind, _ := ref["kind"].(string)
			refName, _ := ref["name"].(string)
			if refName == "" || roles[kind+"/"+refName] != nil {
				continue
			}
			resource := "clusterroles"
			if kind == "Role" {
				resource = "roles"
			}
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{rbacGroup}, Resources: []string{resource}, ResourceNames: []string{refName}, Verbs: []string{"bind"}})
			note("%s %s binds %s %s, which the chart does not create: `bind` on that one role added", gk.Kind, name, kind, refName)
		}
	}
	sort.Strings(notes) // a template file's documents come in no fixed order
	return rules, notes, nil
}

// aggregated returns the ClusterRoles of roles an aggregation rule selects.
func aggregated(rule *rbacv1.AggregationRule, roles map[string]*rbacv1.ClusterRole) ([]string, error) {
	var out []string
	for _, sel := range rule.ClusterRoleSelectors {
		s, err := metav1.LabelSelectorAsSelector(&sel)
		if err != nil {
			return nil, err
		}
		for key, role := range roles {
			if strings.HasPrefix(key, "ClusterRole/") && role.AggregationRule == nil && s.Matches(labels.Set(role.Labels)) && !slices.Contains(out, key) {
				out = append(out, key)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// releaseNamed returns the resourceNames that hold the release's name or
// namespace: they differ in each release, so no one name can be granted.
func releaseNamed(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.Contains(n, renderRelease) || strings.Contains(n, renderNamespace) {
			out = append(out, n)
		}
	}
	return out
}

// starOf names the field of a rule that holds "*", or "".
func starOf(r rbacv1.PolicyRule) string {
	fields := []string{"verbs", "apiGroups", "resources", "nonResourceURLs", "resourceNames"}
	for i, vs := range [][]string{r.Verbs, r.APIGroups, r.Resources, r.NonResourceURLs, r.ResourceNames} {
		if slices.Contains(vs, "*") {
			return fields[i]
		}
	}
	return ""
}

// ruleKey identifies a rule for deduplication.
func ruleKey(r rbacv1.PolicyRule) string {
	return fmt.Sprint(r.APIGroups, r.Resources, r.ResourceNames, r.NonResourceURLs, r.Verbs)
}
