package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/watches"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// clusterRBACGroup is TestPackagedChartWithClusterRBAC's group: not the
// corpus walk's (walkGroup), whose GizmoController CRD it would share.
const clusterRBACGroup = "rbac.corpus.chartkeeper.dev"

// A chart that installs a controller with cluster-wide RBAC (a
// ClusterRole with resourceNames and nonResourceURLs, a namespaced Role,
// an aggregated ClusterRole fed by labelled roles, a CRD in crds/) is
// packaged with create-api, unedited, and its sample becomes Ready under
// an operator that runs as a ServiceAccount bound only to the generated
// ClusterRole: create-api opened the watch's scope to cluster-scoped
// objects and said why, and the generated role holds what the chart's
// roles grant (the API server's escalation check passes).
//
// It runs beside the corpus walk, which packages the same chart: its kind
// is of a group of its own (clusterRBACGroup), so that its CRD is its own,
// and the chart's cluster-scoped objects carry the release's namespace in
// their names. The CRD the chart ships (gizmos.corpus.chartkeeper.dev) is
// the same in both and no custom resource of it is made: chartkeeper
// creates it when missing and leaves it alone when there, terminating or
// not, and each test deletes it after its own operator stopped.
func TestPackagedChartWithClusterRBAC(t *testing.T) {
	parallel(t, quick)
	env := testenv.Cluster(t)
	ctx := context.Background()
	proj := t.TempDir()
	chart := filepath.Join(testenv.RepoRoot(), "test", "corpus", "gizmo-controller")
	out := chartkeeper(t, 0, "create-api", "--chart", chart, "--group", clusterRBACGroup, "--version", "v1alpha1",
		"--kind", "GizmoController", "--project-dir", proj)
	for _, want := range []string{"scope.clusterScoped", "ClusterRole", "ClusterRoleBinding"} {
		if !strings.Contains(out, want) {
			t.Errorf("create-api does not say %q:\n%s", want, out)
		}
	}
	ws, err := watches.Load(filepath.Join(proj, "watches.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || !ws[0].Scope.AllowsClusterScoped() {
		t.Fatalf("the watch's scope is not open to cluster-scoped objects: %+v", ws)
	}
	// A second run changes nothing.
	if again := chartkeeper(t, 0, "create-api", "--chart", chart, "--group", clusterRBACGroup, "--version", "v1alpha1",
		"--kind", "GizmoController", "--project-dir", proj); strings.Contains(again, "created") || strings.Contains(again, "updated") {
		t.Errorf("second create-api changed files:\n%s", again)
	}

	// No release deletes a CRD a chart ships: the test does.
	deleteShippedCRDs(t, env, filepath.Join(proj, "charts", "gizmo-controller", "crds"))
	ns, s := runPackaged(t, env, proj)
	if err := env.Client.Create(ctx, s); err != nil {
		t.Fatalf("creating the sample: %v", err)
	}
	waitCRReady(t, env, s.GroupVersionKind(), ns, s.GetName())

	// The chart's own ClusterRole is released as written.
	var role rbacv1.ClusterRole
	name := ns + "-" + s.GetName() + "-gizmo-controller"
	if err := env.Client.Get(ctx, types.NamespacedName{Name: name}, &role); err != nil {
		t.Fatalf("the chart's ClusterRole %s: %v", name, err)
	}
	var urls, named bool
	for _, r := range role.Rules {
		urls = urls || len(r.NonResourceURLs) > 0
		named = named || len(r.ResourceNames) > 0
	}
	if !urls || !named {
		b, _ := yaml.Marshal(role.Rules)
		t.Errorf("the released ClusterRole lost its nonResourceURLs or resourceNames:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(proj, "charts", "gizmo-controller", "crds", "gizmos.yaml")); err != nil {
		t.Errorf("the chart's crds/ was not copied: %v", err)
	}
}
