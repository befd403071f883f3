package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// manifests --check (make lint) fails when the generated operator chart or
// OLM bundle under config/ is edited or missing, and manifests rewrites
// them.
func TestManifestsCheckCoversOperatorChartAndBundle(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(dir string) error
		stale string
	}{
		{"chart values edited", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "chart", "chartkeeper", "values.yaml"), []byte("replicas: 3\n"), 0o644)
		}, "chart/chartkeeper/values.yaml"},
		{"chart deployment removed", func(dir string) error {
			return os.Remove(filepath.Join(dir, "chart", "chartkeeper", "templates", "manager", "deployment.yaml"))
		}, "chart/chartkeeper/templates/manager/deployment.yaml"},
		{"bundle CSV edited", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "bundle", "manifests", "chartkeeper.clusterserviceversion.yaml"), []byte("kind: ClusterServiceVersion\n"), 0o644)
		}, "bundle/manifests/chartkeeper.clusterserviceversion.yaml"},
		{"bundle annotations removed", func(dir string) error {
			return os.Remove(filepath.Join(dir, "bundle", "metadata", "annotations.yaml"))
		}, "bundle/metadata/annotations.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "config")
			if out, err := exec.Command("cp", "-r", "../../config", dir).CombinedOutput(); err != nil {
				t.Fatalf("cp: %v\n%s", err, out)
			}
			args := []string{"manifests", "--watches-file", "../../watches.yaml", "--config-dir", dir}
			check := append(args, "--check")
			var out, errOut bytes.Buffer
			if code := Main(check, &out, &errOut); code != ExitOK {
				t.Fatalf("check of a fresh copy: exit %d\n%s", code, errOut.String())
			}
			if err := tt.edit(dir); err != nil {
				t.Fatal(err)
			}
			errOut.Reset()
			if code := Main(check, &out, &errOut); code != ExitFailure || !strings.Contains(errOut.String(), tt.stale) {
				t.Errorf("check after the edit: exit %d, want %d naming %s:\n%s", code, ExitFailure, tt.stale, errOut.String())
			}
			if code := Main(args, &out, &errOut); code != ExitOK {
				t.Fatalf("manifests: exit %d\n%s", code, errOut.String())
			}
			errOut.Reset()
			if code := Main(check, &out, &errOut); code != ExitOK {
				t.Errorf("check after manifests: exit %d\n%s", code, errOut.String())
			}
		})
	}
}
