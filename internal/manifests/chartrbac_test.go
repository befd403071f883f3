package manifests

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

var update = flag.Bool("update", false, "rewrite the golden files of TestChartRBACGolden")

// Chart -> role and notes, against golden files in testdata/rbac.
func TestChartRBACGolden(t *testing.T) {
	for _, tc := range []struct {
		name, chart, wantErr string
		wantScope            watches.Scope
	}{
		{name: "gizmo-controller", chart: "../../test/corpus/gizmo-controller", wantScope: watches.Scope{ClusterScoped: true}},
		{name: "metrics-adapter", chart: "testdata/rbac/metrics-adapter", wantScope: watches.Scope{ClusterScoped: true, Namespaces: []string{"kube-system"}}},
		// A PodDisruptionBudget only above one replica (replicaCount: 1 by default).
		{name: "webserver", chart: "../../test/corpus/webserver"},
		{name: "wildcard", chart: "testdata/rbac/wildcard", wantErr: `ClusterRole render-wildcard rule 1 grants verbs "*"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := loader.Load(tc.chart)
			if err != nil {
				t.Fatal(err)
			}
			w := watches.Watch{Group: "golden.chartkeeper.dev", Version: "v1", Kind: "Golden", Chart: ch}
			role, notes, err := Role([]watches.Watch{w}, nil, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := marshal(role)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), `"*"`) || strings.Contains(string(b), "- '*'") {
				t.Errorf("the role grants *:\n%s", b)
			}
			got := string(b) + "# notes:\n# " + strings.Join(notes, "\n# ") + "\n"
			golden := filepath.Join("testdata", "rbac", tc.name+".role.yaml")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s differs (go test ./internal/manifests -run TestChartRBACGolden -update):\n%s", golden, got)
			}
			renders, err := Render(w, nil)
			if err != nil {
				t.Fatal(err)
			}
			scope, _ := NeededScope(w, renders)
			if scope.ClusterScoped != tc.wantScope.ClusterScoped || strings.Join(scope.Namespaces, ",") != strings.Join(tc.wantScope.Namespaces, ",") {
				t.Errorf("scope %+v, want %+v", scope, tc.wantScope)
			}
		})
	}
}
