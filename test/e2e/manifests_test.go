package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// make deploy applies config/default (kustomize) with the image IMG: the
// real API server accepts every object and the manager Deployment rolls
// out (kwok runs its Pod); make undeploy removes it again.
func TestDeployAndUndeploy(t *testing.T) {
	env := testenv.Cluster(t)
	kubectl := filepath.Join(testenv.BinDir(), "kubectl")
	makeTarget := func(target string) string {
		cmd := exec.Command("make", "--no-print-directory", target, "IMG=registry.example/chartkeeper:e2e")
		cmd.Dir = testenv.RepoRoot()
		cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make %s: %v\n%s", target, err, out)
		}
		return string(out)
	}
	out := makeTarget("deploy")
	undeployed := false
	t.Cleanup(func() {
		if !undeployed {
			makeTarget("undeploy")
		}
	})
	for _, want := range []string{"namespace/chartkeeper-system", "deployment.apps/chartkeeper-controller-manager", "serviceaccount/chartkeeper-controller-manager",
		"clusterrole.rbac.authorization.k8s.io/chartkeeper-manager-role", "customresourcedefinition.apiextensions.k8s.io/webapps.apps.chartkeeper.dev",
		// secure metrics: the HTTPS Service, the manager's token checks, the role for Prometheus
		"service/chartkeeper-controller-manager-metrics-service", "clusterrole.rbac.authorization.k8s.io/chartkeeper-metrics-auth-role",
		"clusterrolebinding.rbac.authorization.k8s.io/chartkeeper-metrics-auth-rolebinding", "clusterrole.rbac.authorization.k8s.io/chartkeeper-metrics-reader"} {
		if !strings.Contains(out, want) {
			t.Errorf("make deploy output lacks %s:\n%s", want, out)
		}
	}
	rollout := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "-n", "chartkeeper-system", "rollout", "status",
		"deployment/chartkeeper-controller-manager", "--timeout=60s")
	if out, err := rollout.CombinedOutput(); err != nil {
		t.Fatalf("manager rollout: %v\n%s", err, out)
	}
	img, err := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "-n", "chartkeeper-system", "get", "deployment/chartkeeper-controller-manager",
		"-o", "jsonpath={.spec.template.spec.containers[0].image}").CombinedOutput()
	if err != nil || string(img) != "registry.example/chartkeeper:e2e" {
		t.Errorf("manager image %q (%v), want IMG", img, err)
	}
	checkManagerLockedDown(t, env)
	out = makeTarget("undeploy")
	undeployed = true
	if !strings.Contains(out, "deployment.apps \"chartkeeper-controller-manager\" deleted") {
		t.Errorf("make undeploy output:\n%s", out)
	}
}

// checkManagerLockedDown checks the deployed manager Pod: admitted into a
// namespace that enforces the restricted Pod Security Standard, it runs as
// non-root, with a read-only root filesystem, no privilege escalation and
// no capabilities.
func checkManagerLockedDown(t *testing.T, env *testenv.Env) {
	t.Helper()
	ctx := context.Background()
	var ns corev1.Namespace
	if err := env.Client.Get(ctx, client.ObjectKey{Name: "chartkeeper-system"}, &ns); err != nil {
		t.Fatal(err)
	}
	if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
		t.Errorf("namespace enforces Pod Security %q, want restricted", got)
	}
	var pods corev1.PodList
	if err := env.Client.List(ctx, &pods, client.InNamespace("chartkeeper-system"),
		client.MatchingLabels{"app.kubernetes.io/component": "manager"}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		t.Fatal("no manager Pod")
	}
	for _, pod := range pods.Items {
		psc := pod.Spec.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
			t.Errorf("%s: runAsNonRoot is not set", pod.Name)
		}
		for _, c := range pod.Spec.Containers {
			sc := c.SecurityContext
			switch {
			case sc == nil:
				t.Errorf("%s/%s: no securityContext", pod.Name, c.Name)
			case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
				t.Errorf("%s/%s: root filesystem is writable", pod.Name, c.Name)
			case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
				t.Errorf("%s/%s: privilege escalation is allowed", pod.Name, c.Name)
			case sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL"):
				t.Errorf("%s/%s: capabilities are not all dropped", pod.Name, c.Name)
			}
		}
	}
}
