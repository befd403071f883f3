package devcluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The make targets that act on the cluster of KUBECONFIG build only what
// they use: kubectl (hack/build-tools.sh kubectl), and make run only the
// operator (which applies its CRDs itself: chartkeeper install-crds); never
// the control plane (make run builds it only when KUBECONFIG does not
// answer, in hack/run.sh). Checked with make -n in a
// directory holding only the Makefile and the go.mod files it reads: bin/ is empty, as in a fresh clone.
func TestMakeTargetsBuildOnlyWhatTheyUse(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	dir := t.TempDir()
	for _, f := range []string{"Makefile", "go.mod", "go.sum", "hack/tools/go.mod", "hack/tools/go.sum"} {
		b, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	controlPlane := []string{"build-tools.sh\n", "build-tools.sh control-plane", "kube-apiserver", "etcd", "kwok", "devcluster"}
	for _, tc := range []struct {
		target string
		want   []string // in make -n's output
		not    []string
	}{
		{"run", []string{"go build -trimpath -o bin/chartkeeper ./cmd/chartkeeper", "hack/run.sh"}, append(controlPlane, "kubectl")},
		{"install", []string{"hack/build-tools.sh kubectl", "bin/kubectl apply -k config/crd"}, append(controlPlane, "chartkeeper ./cmd")},
		{"uninstall", []string{"hack/build-tools.sh kubectl", "bin/kubectl delete"}, append(controlPlane, "chartkeeper ./cmd")},
		{"deploy", []string{"hack/build-tools.sh kubectl", "bin/kubectl kustomize config/default"}, append(controlPlane, "chartkeeper ./cmd")},
		{"undeploy", []string{"hack/build-tools.sh kubectl", "bin/kubectl kustomize config/default"}, append(controlPlane, "chartkeeper ./cmd")},
		{"tools", []string{"hack/build-tools.sh\n"}, nil},
	} {
		t.Run(tc.target, func(t *testing.T) {
			cmd := exec.Command("make", "-n", "--no-print-directory", tc.target, "KUBECONFIG="+filepath.Join(dir, "reachable.kubeconfig"))
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("make -n %s: %v\n%s", tc.target, err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("make -n %s does not run %q:\n%s", tc.target, w, out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(string(out), n) {
					t.Errorf("make -n %s builds %q, which it does not use:\n%s", tc.target, n, out)
				}
			}
		})
	}
}
