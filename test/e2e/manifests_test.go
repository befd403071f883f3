package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartkeeper/chartkeeper/internal/testenv"
)

// config/default renders with kustomize, the real API server accepts every
// object in it, and the manager Deployment rolls out (kwok runs its Pod).
func TestDefaultManifestsAreAccepted(t *testing.T) {
	env := testenv.Cluster(t)
	kubectl := filepath.Join(testenv.BinDir(), "kubectl")
	dir := filepath.Join(testenv.RepoRoot(), "config", "default")
	out, err := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "apply", "-k", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply -k config/default: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "delete", "--wait=false", "-k", dir).CombinedOutput(); err != nil {
			t.Errorf("kubectl delete -k config/default: %v\n%s", err, out)
		}
	})
	rollout := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "-n", "chartkeeper-system", "rollout", "status",
		"deployment/chartkeeper-controller-manager", "--timeout=60s")
	if out, err := rollout.CombinedOutput(); err != nil {
		t.Fatalf("manager rollout: %v\n%s", err, out)
	}
	for _, want := range []string{"namespace/chartkeeper-system", "deployment.apps/chartkeeper-controller-manager", "serviceaccount/chartkeeper-controller-manager"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}
