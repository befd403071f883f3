package e2e

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// serviceMonitor is the part of a monitoring.coreos.com/v1 ServiceMonitor
// the check reads (the Prometheus Operator's types are not a dependency).
type serviceMonitor struct {
	Kind string `json:"kind"`
	Spec struct {
		Endpoints []struct {
			Port, Scheme, Path, BearerTokenFile string
		} `json:"endpoints"`
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
	} `json:"spec"`
}

// The in-cluster manifests fit together: the manager serves secure
// metrics on the port the metrics Service targets, and config/prometheus'
// ServiceMonitor selects that Service and scrapes its HTTPS port with a
// bearer token.
func TestMetricsManifestsFitTogether(t *testing.T) {
	var deploy appsv1.Deployment
	var svc corev1.Service
	for _, doc := range kustomizeDocs(t, "default") {
		switch {
		case strings.Contains(doc, "kind: Deployment"):
			mustUnmarshal(t, doc, &deploy)
		case strings.Contains(doc, "kind: Service\n") && strings.Contains(doc, "metrics-service"):
			mustUnmarshal(t, doc, &svc)
		}
	}
	c := deploy.Spec.Template.Spec.Containers[0]
	for _, arg := range []string{"--metrics-secure", "--metrics-bind-address=:8443"} {
		if !slices.Contains(c.Args, arg) {
			t.Errorf("the manager's args %q lack %s", c.Args, arg)
		}
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8443 || svc.Spec.Ports[0].TargetPort.IntValue() != 8443 {
		t.Fatalf("metrics Service ports %+v, want https 8443 -> 8443", svc.Spec.Ports)
	}
	for k, v := range svc.Spec.Selector {
		if deploy.Spec.Template.Labels[k] != v {
			t.Errorf("metrics Service selects %s=%s, the manager Pod has %q", k, v, deploy.Spec.Template.Labels[k])
		}
	}
	docs := kustomizeDocs(t, "prometheus")
	var sm serviceMonitor
	mustUnmarshal(t, docs[0], &sm)
	if sm.Kind != "ServiceMonitor" || len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("config/prometheus: %+v, want one ServiceMonitor with one endpoint", sm)
	}
	ep := sm.Spec.Endpoints[0]
	if ep.Port != svc.Spec.Ports[0].Name || ep.Scheme != "https" || ep.Path != "/metrics" || ep.BearerTokenFile == "" {
		t.Errorf("ServiceMonitor endpoint %+v, want port %q, https, /metrics, a bearer token", ep, svc.Spec.Ports[0].Name)
	}
	for k, v := range sm.Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("ServiceMonitor selects %s=%s, the metrics Service has %q", k, v, svc.Labels[k])
		}
	}
}

// kustomizeDocs builds config/<dir> and splits it into documents.
func kustomizeDocs(t *testing.T, dir string) []string {
	t.Helper()
	out, err := exec.Command(filepath.Join(testenv.BinDir(), "kubectl"), "kustomize", filepath.Join(testenv.RepoRoot(), "config", dir)).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/%s: %v", dir, err)
	}
	return strings.Split(string(out), "\n---\n")
}

func mustUnmarshal(t *testing.T, doc string, into any) {
	t.Helper()
	if err := yaml.Unmarshal([]byte(doc), into); err != nil {
		t.Fatal(err)
	}
}
