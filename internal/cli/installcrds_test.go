package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInstallCRDsExitCodes(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	// Nothing listens on port 1 of the loopback address.
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: x}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	crds := filepath.Join("..", "..", "config", "crd", "bases")
	for _, tc := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"a cluster that does not answer", []string{"--kubeconfig", kc, crds}, ExitUnreachable, "does not answer"},
		{"no kubeconfig", []string{"--kubeconfig", filepath.Join(dir, "missing"), crds}, ExitUnreachable, "no cluster to ask"},
		{"a directory without CRDs", []string{"--kubeconfig", kc, dir}, ExitConfig, "no CustomResourceDefinition"},
		{"two directories", []string{crds, dir}, ExitConfig, "one directory at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Main(append([]string{"install-crds"}, tc.args...), &out, &errOut); code != tc.code || !strings.Contains(errOut.String(), tc.says) {
				t.Errorf("exit %d, stderr %q; want %d saying %q", code, errOut.String(), tc.code, tc.says)
			}
		})
	}
}
