package manifests

import (
	"fmt"
	"sort"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// releasedVerbs are what Helm and drift correction do to released objects.
var releasedVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete"}

// Samples are custom resources' specs by kind, rendered besides a chart's
// defaults to find the kinds it can release (optional parts off by default).
type Samples map[schema.GroupVersionKind][]map[string]any

// Role returns the ClusterRole the operator needs for these watches: its
// custom resources, Helm's release Secrets, Events, and every kind the
// charts render with their default values and with each sample's spec,
// each with exact verbs, plus the extra rules of the Go hooks (hookRules).
func Role(ws []watches.Watch, samples Samples, hookRules []rbacv1.PolicyRule) (*rbacv1.ClusterRole, error) {
	byGroup := map[string]map[string][]string{} // group -> resource -> verbs
	add := func(group, resource string, verbs ...string) {
		if byGroup[group] == nil {
			byGroup[group] = map[string][]string{}
		}
		byGroup[group][resource] = union(byGroup[group][resource], verbs)
	}
	for _, w := range ws {
		plural := Plural(w.Kind)
		add(w.Group, plural, "get", "list", "watch", "update", "patch")
		add(w.Group, plural+"/status", "get", "update", "patch")
		add(w.Group, plural+"/finalizers", "update")
		for i, vals := range append([]map[string]any{{}}, samples[w.GroupVersionKind()]...) {
			kinds, err := renderedKinds(w.Chart, vals)
			if err != nil {
				what := "its defaults"
				if i > 0 {
					what = fmt.Sprintf("sample %d", i)
				}
				return nil, fmt.Errorf("%s: rendering chart %s with %s: %w", w, w.Chart.Metadata.Name, what, err)
			}
			for _, gk := range kinds {
				add(gk.Group, Plural(gk.Kind), releasedVerbs...)
			}
		}
	}
	for _, r := range hookRules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				add(g, res, r.Verbs...)
			}
		}
	}
	add("", "secrets", releasedVerbs...) // Helm's release storage
	add("", "events", "create", "patch")
	add("events.k8s.io", "events", "create", "patch")

	role := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: "manager-role"},
	}
	groups := sortedKeys(byGroup)
	for _, g := range groups {
		// One rule per distinct verb set within a group keeps the role short.
		byVerbs := map[string][]string{}
		var order []string
		for _, res := range sortedKeys(byGroup[g]) {
			k := fmt.Sprint(byGroup[g][res])
			if _, ok := byVerbs[k]; !ok {
				order = append(order, k)
			}
			byVerbs[k] = append(byVerbs[k], res)
		}
		for _, k := range order {
			res := byVerbs[k]
			role.Rules = append(role.Rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: res, Verbs: byGroup[g][res[0]]})
		}
	}
	return role, nil
}

// renderedKinds renders a chart with values over its defaults (client-side)
// and returns the kinds it produces.
func renderedKinds(ch *chart.Chart, spec map[string]any) ([]schema.GroupKind, error) {
	vals, err := chartutil.ToRenderValues(ch, spec, chartutil.ReleaseOptions{Name: "rbac", Namespace: "default", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	seen := map[schema.GroupKind]bool{}
	for name, content := range files {
		if !isManifest(name) {
			continue
		}
		for _, doc := range releaseutil.SplitManifests(content) {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil || tm.Kind == "" {
				continue
			}
			gv, err := schema.ParseGroupVersion(tm.APIVersion)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			seen[schema.GroupKind{Group: gv.Group, Kind: tm.Kind}] = true
		}
	}
	out := make([]schema.GroupKind, 0, len(seen))
	for gk := range seen {
		out = append(out, gk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
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
