package watches

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
)

// copyChart copies testdata/chart to dir/rel.
func copyChart(t *testing.T, dir, rel string) {
	t.Helper()
	src := filepath.Join("testdata", "chart")
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel, r), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel, r), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Files written for operator-sdk's Helm operator (v1.42) and for
// helm-operator-plugins (v0.9.1) load with the meaning they have there.
// Each case runs in a working directory of its own holding
// helm-charts/nginx, as operator-sdk's image holds it in /opt/helm.
func TestLoadPredecessorShapes(t *testing.T) {
	type env map[string]string
	tests := []struct {
		name string
		// watchesDir is where the file is, relative to the working directory.
		watchesDir string
		yaml       string
		env        env
		check      func(t *testing.T, w Watch)
	}{
		{
			name:       "operator-sdk scaffold, file beside the charts",
			watchesDir: ".",
			yaml: `# Use the 'create api' subcommand to add watches to this file.
- group: demo.example.com
  version: v1alpha1
  kind: Nginx
  chart: helm-charts/nginx
#+kubebuilder:scaffold:watch
`,
			check: func(t *testing.T, w Watch) {
				if !w.WatchesDependents() || w.Period() != 0 || w.Concurrency() != 1 || !w.LabelSelector.Empty() || w.DryRunOption != "" {
					t.Errorf("defaults: dependents %v, period %s, concurrency %d, selector %s, dryRunOption %q",
						w.WatchesDependents(), w.Period(), w.Concurrency(), w.LabelSelector, w.DryRunOption)
				}
			},
		},
		{
			name:       "chart relative to the working directory, file elsewhere (a mounted ConfigMap)",
			watchesDir: "etc/operator",
			yaml:       "- group: demo.example.com\n  version: v1alpha1\n  kind: Nginx\n  chart: helm-charts/nginx\n",
			check: func(t *testing.T, w Watch) {
				cwd, _ := os.Getwd()
				if w.ResolvedChartPath != filepath.Join(cwd, "helm-charts", "nginx") {
					t.Errorf("chart resolved to %s, want the working directory's helm-charts/nginx", w.ResolvedChartPath)
				}
			},
		},
		{
			name:       "operator-sdk overrideValues: $VAR, ${VAR}, unset, then the template",
			watchesDir: ".",
			yaml: `- group: demo.example.com
  version: v1alpha1
  kind: Nginx
  chart: helm-charts/nginx
  overrideValues:
    image.repository: $RELATED_IMAGE_NGINX
    image.tag: ${NGINX_TAG}
    proxy: $UNSET_PROXY
    defaulted: ${UNSET_PROXY:-squid}
    price: 5$
    dollars: a$$b
    nested: ${NESTED}
    templated: '{{ printf "%s/%s" "$NGINX_TAG" "x" | upper }}'
    fromEnvFunc: '{{ env "NGINX_TAG" }}'
`,
			env: env{"RELATED_IMAGE_NGINX": "quay.io/mirror/nginx", "NGINX_TAG": "1.25", "NESTED": "x$NGINX_TAG"},
			check: func(t *testing.T, w Watch) {
				want := map[string]string{
					"image.repository": "quay.io/mirror/nginx",
					"image.tag":        "1.25",
					"proxy":            "",            // unset: empty, as os.ExpandEnv
					"defaulted":        "",            // no shell defaults: the name is "UNSET_PROXY:-squid"
					"price":            "5$",          // a trailing $ stays
					"dollars":          "ab",          // $$ is the variable "$", unset
					"nested":           "x$NGINX_TAG", // expanded once, as operator-sdk does
					"templated":        "1.25/X",
					"fromEnvFunc":      "1.25",
				}
				for k, v := range want {
					if got, ok := w.OverrideValues[k]; !ok || got != v {
						t.Errorf("overrideValues[%s] = %q (set %v), want %q", k, got, ok, v)
					}
				}
			},
		},
		{
			name:       "operator-sdk's documented example: selector matchExpressions, dryRunOption server",
			watchesDir: ".",
			yaml: `- group: foo.example.com
  version: v1alpha1
  kind: Foo
  chart: helm-charts/nginx
  overrideValues:
    image.repository: quay.io/mycustomrepo
  watchDependentResources: false
  selector:
    matchExpressions:
     - {key: testLabel, operator: Exists, values: []}
  dryRunOption: server
  reconcilePeriod: 1m30s
`,
			check: func(t *testing.T, w Watch) {
				if w.WatchesDependents() || w.DryRunOption != DryRunServer || w.Period() != 90*time.Second {
					t.Errorf("dependents %v, dryRunOption %q, period %s", w.WatchesDependents(), w.DryRunOption, w.Period())
				}
				if !w.LabelSelector.Matches(labels.Set{"testLabel": ""}) || w.LabelSelector.Matches(labels.Set{"other": "x"}) {
					t.Errorf("selector %s", w.LabelSelector)
				}
			},
		},
		{
			name:       "helm-operator-plugins: reconcilePeriod and maxConcurrentReconciles per watch",
			watchesDir: ".",
			yaml: `- group: cache.example.com
  version: v1alpha1
  kind: Memcached
  chart: helm-charts/nginx
  reconcilePeriod: 2m
  maxConcurrentReconciles: 4
  selector: {}
`,
			check: func(t *testing.T, w Watch) {
				if w.Period() != 2*time.Minute || w.Concurrency() != 4 || !w.LabelSelector.Empty() {
					t.Errorf("period %s, concurrency %d, selector %s", w.Period(), w.Concurrency(), w.LabelSelector)
				}
			},
		},
		{
			name:       "overrideValuesAsStrings: operator-sdk's string values",
			watchesDir: ".",
			yaml:       "- version: v1\n  kind: Nginx\n  chart: helm-charts/nginx\n  overrideValues: {replicaCount: \"2\"}\n  overrideValuesAsStrings: true\n",
			check: func(t *testing.T, w Watch) {
				if !w.OverrideValuesAsStrings {
					t.Error("overrideValuesAsStrings not read")
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyChart(t, dir, filepath.Join("helm-charts", "nginx"))
			t.Chdir(dir)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			os.Unsetenv("UNSET_PROXY")
			if err := os.MkdirAll(tc.watchesDir, 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(tc.watchesDir, "watches.yaml")
			if err := os.WriteFile(file, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			ws, err := Load(file)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tc.check(t, ws[0])
		})
	}
}

// What chartkeeper cannot honour with the predecessors' meaning is refused
// at load, naming the field and saying why.
func TestLoadPredecessorRefusals(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string)
		yaml  string
		want  []string
	}{
		{"dryRunOption client", nil, "dryRunOption: client",
			[]string{`field "dryRunOption": "client" is refused`, "lookup()", `set it to "server"`}},
		{"dryRunOption none", nil, "dryRunOption: none", []string{`field "dryRunOption": "none" is refused`}},
		{"dryRunOption typo", nil, "dryRunOption: sever", []string{`field "dryRunOption": "sever" is not a dry-run option`}},
		{"a template naming data", nil, "overrideValues: {x: '{{ .Values.x }}'}",
			[]string{`field "overrideValues"`, `key "x"`}},
		{"two charts of one name", func(t *testing.T, dir string) { copyChart(t, dir, filepath.Join("etc", "helm-charts", "nginx")) }, "",
			[]string{`field "chart": "helm-charts/nginx" names two charts`, "write an absolute path"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyChart(t, dir, filepath.Join("helm-charts", "nginx"))
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			t.Chdir(dir)
			if err := os.MkdirAll("etc", 0o755); err != nil {
				t.Fatal(err)
			}
			y := "- version: v1\n  kind: Nginx\n  chart: helm-charts/nginx\n"
			if tc.yaml != "" {
				y += "  " + tc.yaml + "\n"
			}
			file := filepath.Join("etc", "watches.yaml")
			if err := os.WriteFile(file, []byte(y), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(file)
			if err == nil {
				t.Fatal("loaded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// A chart found nowhere says where it was looked for.
func TestMissingChartSaysWhereItLooked(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	_, err := Parse([]byte("- version: v1\n  kind: Nginx\n  chart: helm-charts/nope\n"), "config")
	if err == nil || !strings.Contains(err.Error(), "looked relative to the watches file's directory and to the working directory "+dir) {
		t.Errorf("error %v does not say where the chart was looked for", err)
	}
}
