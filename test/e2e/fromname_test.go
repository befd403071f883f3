package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// docs/watches.md, "Names a resource's author picks": a release namespace
// taken from the resource's name, or an impersonated account of a fixed
// namespace named after the resource, stops the operator before it
// touches a cluster, with exit code 2 and a message naming the field and
// its opt-in.
func TestOperatorRefusesNamespaceFromResourceName(t *testing.T) {
	parallel(t, quick) // no cluster
	chart := filepath.Join(testenv.RepoRoot(), "charts", "webapp")
	file := filepath.Join(t.TempDir(), "watches.yaml")
	content := "- group: apps.chartkeeper.dev\n  version: v1alpha1\n  kind: Tenant\n  chart: " + chart +
		"\n  releaseNamespace: \"{{ .Name }}\"\n" +
		"- group: apps.chartkeeper.dev\n  version: v1alpha1\n  kind: Platform\n  chart: " + chart +
		"\n  impersonate: {serviceAccount: \"platform/{{ .Name }}\"}\n"
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(operatorBinary(t), "run", "--watches-file", file).CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 {
		t.Fatalf("want exit code 2, got %v\n%s", err, out)
	}
	for _, want := range []string{
		`entry 0 (kind "Tenant"): field "releaseNamespace"`, "allowReleaseNamespaceFromName: true",
		`entry 1 (kind "Platform"): field "impersonate.serviceAccount"`, "impersonate.allowServiceAccountFromName: true",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the message does not say %s:\n%s", want, out)
		}
	}
}
