package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartkeeper/chartkeeper/internal/testenv"
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
		"clusterrole.rbac.authorization.k8s.io/chartkeeper-manager-role", "customresourcedefinition.apiextensions.k8s.io/webapps.apps.chartkeeper.dev"} {
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
	out = makeTarget("undeploy")
	undeployed = true
	if !strings.Contains(out, "deployment.apps \"chartkeeper-controller-manager\" deleted") {
		t.Errorf("make undeploy output:\n%s", out)
	}
}
