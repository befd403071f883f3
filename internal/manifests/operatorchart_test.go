package manifests

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"
)

// operatorChart is the generated operator chart (kept current by
// `chartkeeper manifests --check`, i.e. make lint).
const operatorChart = "../../config/chart/chartkeeper"

// The generated operator chart passes helm lint (errors and warnings).
func TestOperatorChartLints(t *testing.T) {
	l := lint.All(operatorChart, nil, "chartkeeper-system", false)
	for _, m := range l.Messages {
		if m.Severity >= support.WarningSev {
			t.Errorf("helm lint: %s", m)
		}
	}
}

// renderOperatorChart renders the operator chart with values as helm
// template would, and returns its objects by kind/name.
func renderOperatorChart(t *testing.T, vals map[string]any) map[string]map[string]any {
	t.Helper()
	ch, err := loader.Load(operatorChart)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "chartkeeper", Namespace: "ops", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for name, s := range files {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range releaseutil.SplitManifests(s) {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if m == nil {
				continue
			}
			md, _ := m["metadata"].(map[string]any)
			out[m["kind"].(string)+"/"+md["name"].(string)] = m
		}
	}
	return out
}

// dig returns the value at path in obj (map keys, or an index into a list
// written as a number).
func dig(obj any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := obj.(map[string]any)
			obj = m[k]
		case int:
			l, _ := obj.([]any)
			if k >= len(l) {
				return nil
			}
			obj = l[k]
		}
	}
	return obj
}

// The chart renders what config/default deploys, and its values steer the
// image, log level, watched namespaces, metrics, leader election, replicas
// and CRDs.
func TestOperatorChartRenders(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		check  func(t *testing.T, objs map[string]map[string]any)
	}{
		{"defaults", nil, func(t *testing.T, objs map[string]map[string]any) {
			for _, want := range []string{"Deployment/chartkeeper-controller-manager", "ServiceAccount/chartkeeper-controller-manager",
				"ClusterRole/chartkeeper-manager-role", "ClusterRoleBinding/chartkeeper-manager-rolebinding",
				"Role/chartkeeper-leader-election", "RoleBinding/chartkeeper-leader-election",
				"CustomResourceDefinition/webapps.apps.chartkeeper.dev", "CustomResourceDefinition/etcdclusters.apps.chartkeeper.dev"} {
				if objs[want] == nil {
					t.Errorf("no %s", want)
				}
			}
			d := objs["Deployment/chartkeeper-controller-manager"]
			c := dig(d, "spec", "template", "spec", "containers", 0)
			if got := dig(c, "image"); got != "chartkeeper:dev" {
				t.Errorf("image %v", got)
			}
			if got := dig(c, "securityContext", "readOnlyRootFilesystem"); got != true {
				t.Errorf("container securityContext %v", dig(c, "securityContext"))
			}
			if got := dig(d, "spec", "template", "spec", "securityContext", "runAsNonRoot"); got != true {
				t.Errorf("pod securityContext %v", dig(d, "spec", "template", "spec", "securityContext"))
			}
			args := strings.Join(toStrings(dig(c, "args")), " ")
			for _, want := range []string{"--leader-elect=true", "--metrics-bind-address=:8443", "--metrics-secure", "--health-probe-bind-address=:8081", "--zap-log-level=info"} {
				if !strings.Contains(args, want) {
					t.Errorf("args %q lack %s", args, want)
				}
			}
			if got := dig(d, "metadata", "namespace"); got != "ops" {
				t.Errorf("namespace %v", got)
			}
			if got := dig(objs["CustomResourceDefinition/webapps.apps.chartkeeper.dev"], "metadata", "annotations", "helm.sh/resource-policy"); got != "keep" {
				t.Errorf("CRD resource-policy %v", got)
			}
		}},
		{"values", map[string]any{
			"image":           map[string]any{"repository": "registry.example/ck", "tag": "v1", "pullPolicy": "Always"},
			"logLevel":        "debug",
			"watchNamespaces": []any{"a", "b"},
			"metrics":         map[string]any{"enabled": false},
			"leaderElection":  map[string]any{"enabled": false},
			"replicas":        2,
			"crd":             map[string]any{"enable": false},
		}, func(t *testing.T, objs map[string]map[string]any) {
			d := objs["Deployment/chartkeeper-controller-manager"]
			c := dig(d, "spec", "template", "spec", "containers", 0)
			if got := dig(c, "image"); got != "registry.example/ck:v1" {
				t.Errorf("image %v", got)
			}
			if got := dig(c, "imagePullPolicy"); got != "Always" {
				t.Errorf("pullPolicy %v", got)
			}
			args := strings.Join(toStrings(dig(c, "args")), " ")
			if !strings.Contains(args, "--leader-elect=false") || !strings.Contains(args, "--metrics-bind-address=0") || !strings.Contains(args, "--zap-log-level=debug") {
				t.Errorf("args %q", args)
			}
			var watch any
			for _, e := range dig(c, "env").([]any) {
				if dig(e, "name") == "WATCH_NAMESPACE" {
					watch = dig(e, "value")
				}
			}
			if watch != "a,b" {
				t.Errorf("WATCH_NAMESPACE %v", watch)
			}
			if got := dig(d, "spec", "replicas"); got != float64(2) {
				t.Errorf("replicas %v", got)
			}
			if objs["CustomResourceDefinition/webapps.apps.chartkeeper.dev"] != nil {
				t.Error("CRDs rendered with crds.enable=false")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.check(t, renderOperatorChart(t, tt.values)) })
	}
}

func toStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
