package manifests

import (
	"fmt"
	"path/filepath"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// A watch with impersonate releases as a ServiceAccount: the operator's
// ClusterRole holds only the read rights of its caches and impersonate
// (Role), and the account gets the release's rights from a ClusterRole
// generated per watch (ReleaseRole), bound in each namespace where that
// kind may be released (docs/multi-tenancy.md).

// releaseRoleDir holds the release ClusterRoles, under config/rbac. It is
// not part of config/default: an administrator binds each role per
// namespace.
const releaseRoleDir = "release"

// ReleaseRoleFile is the file of w's release ClusterRole, under
// config/rbac/release.
func ReleaseRoleFile(w watches.Watch) string {
	return fmt.Sprintf("%s_%s.yaml", w.Group, Plural(w.Kind))
}

// ReleaseRoleName is the name of w's release ClusterRole.
func ReleaseRoleName(w watches.Watch) string {
	return fmt.Sprintf("chartkeeper-release-%s.%s", Plural(w.Kind), w.Group)
}

// impersonateRule lets the operator impersonate w's account: by name when
// the watch's template names one account for every resource.
func impersonateRule(w watches.Watch) rbacv1.PolicyRule {
	r := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}}
	if n := w.Impersonate.FixedServiceAccountName(); n != "" {
		r.ResourceNames = []string{n}
	}
	return r
}

// ReleaseRole returns what releasing w's chart takes, as a ClusterRole to
// bind with a RoleBinding to the watch's ServiceAccount in each namespace
// its resources may release to: every kind the chart renders (defaults,
// samples, flipped booleans) with Helm's verbs, what the chart's own RBAC
// grants, what its tests need. Cluster-scoped kinds are listed too: a
// RoleBinding grants nothing of them, a ClusterRoleBinding would.
func ReleaseRole(w watches.Watch, samples Samples) (*rbacv1.ClusterRole, []string, error) {
	renders, err := Render(w, samples)
	if err != nil {
		return nil, nil, err
	}
	renders = append(renders, renderToggles(w)...)
	rs := newRuleSet()
	notes, err := releaseRules(rs, w, renders)
	if err != nil {
		return nil, nil, err
	}
	if _, crd, _ := impersonatedCRDRules(w, renders); len(crd) > 0 {
		for _, r := range crd {
			rs.addRule(r)
		}
		notes = append(notes, "the chart's templated CRDs are applied as this account (crds.policy "+w.CRDPolicy()+"): the customresourcedefinitions rules are cluster-scoped, granted only through a ClusterRoleBinding")
	}
	return &rbacv1.ClusterRole{
		TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: ReleaseRoleName(w), Labels: map[string]string{
			"app.kubernetes.io/managed-by": "chartkeeper", "chartkeeper.dev/release-role-for": Plural(w.Kind) + "." + w.Group}},
		Rules: rs.rules(),
	}, notes, nil
}

// releaseRoleFiles returns config/rbac/release's files: one ClusterRole
// per impersonating watch, with how to bind it, and their kustomization
// (none when no watch impersonates).
func releaseRoleFiles(ws []watches.Watch, samples Samples) (map[string][]byte, error) {
	out := map[string][]byte{}
	var files []string
	for _, w := range ws {
		if w.Impersonate == nil {
			continue
		}
		role, notes, err := ReleaseRole(w, samples)
		if err != nil {
			return nil, err
		}
		b, err := marshal(role)
		if err != nil {
			return nil, err
		}
		acc, releaseNS := exampleAccount(w)
		head := fmt.Sprintf("# What %s releases need: bind it to their ServiceAccount (%q) in each\n"+
			"# namespace they may release to, e.g. for a resource in team-a\n"+
			"#   kubectl -n %s create serviceaccount %s\n"+
			"#   kubectl -n %s create rolebinding chartkeeper-release-%s --clusterrole=%s --serviceaccount=%s:%s\n",
			w.Kind, w.Impersonate.ServiceAccount, acc.Namespace, acc.Name, releaseNS, Plural(w.Kind), role.Name, acc.Namespace, acc.Name)
		for _, n := range notes {
			head += "# " + n + "\n"
		}
		name := ReleaseRoleFile(w)
		out[filepath.Join("rbac", releaseRoleDir, name)] = append([]byte(header+head), b[len(header):]...)
		files = append(files, name)
	}
	if len(files) == 0 {
		return out, nil
	}
	k := header + "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"
	for _, f := range files {
		k += "  - " + f + "\n"
	}
	out[filepath.Join("rbac", releaseRoleDir, "kustomization.yaml")] = []byte(k)
	return out, nil
}

// exampleAccount is the account of a resource "web" in the namespace
// team-a, and its release namespace: what the role file's example binds.
func exampleAccount(w watches.Watch) (watches.ServiceAccountRef, string) {
	releaseNS := "team-a"
	if ref, err := w.Release("web", "team-a"); err == nil {
		releaseNS = ref.Namespace
	}
	acc, err := w.ServiceAccountFor("web", "team-a", releaseNS, "")
	if err != nil || acc.IsZero() {
		acc = watches.ServiceAccountRef{Namespace: releaseNS, Name: "chartkeeper-release"}
	}
	return acc, releaseNS
}
