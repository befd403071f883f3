package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/apps"
)

// A test app, registered as the bundled apps are: the command line knows
// its command and flags only through package apps.
func init() {
	apps.Register(apps.App{
		Name:  "cli-test",
		Kinds: []schema.GroupKind{{Group: "test.chartkeeper.dev", Kind: "CLITest"}},
		Flags: func(fs *flag.FlagSet) { fs.String("cli-test-flag", "", "a flag of the test app") },
		Commands: []apps.Command{{Name: "cli-test-echo", Usage: "print the arguments (test app)",
			Run: func(args []string, stdout, _ io.Writer) int {
				fmt.Fprintln(stdout, "echo:", strings.Join(args, " "))
				return 7
			}}},
	})
}

func TestMainExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("- group: apps.example.com\n  version: v1\n  kind: Broken\n  chart: nowhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		code       int
		wantStderr []string
		wantStdout []string
	}{
		{"no args", nil, ExitConfig, []string{"Usage:"}, nil},
		{"unknown command", []string{"frobnicate"}, ExitConfig, []string{`unknown command "frobnicate"`, "chartkeeper cli-test-echo"}, nil},
		{"app command", []string{"cli-test-echo", "a", "--b"}, 7, nil, []string{"echo: a --b"}},
		{"app command in help", []string{"help"}, ExitOK, nil, []string{"  chartkeeper cli-test-echo   print the arguments (test app)\n"}},
		{"app flags in run -h", []string{"run", "-h"}, ExitOK, []string{"-cli-test-flag", "-watches-file"}, nil},
		{"app flags in images -h", []string{"images", "-h"}, ExitOK, []string{"-cli-test-flag", "-relocated"}, nil},
		{"app flag parsed by run", []string{"run", "--cli-test-flag", "x", "extra"}, ExitConfig, []string{"unexpected arguments"}, nil},
		{"version", []string{"version"}, ExitOK, nil, []string{"chartkeeper"}},
		{"help", []string{"help"}, ExitOK, nil, []string{"chartkeeper run"}},
		{"unknown flag", []string{"run", "--no-such-flag"}, ExitConfig, []string{"no-such-flag"}, nil},
		{"stray argument", []string{"run", "extra"}, ExitConfig, []string{"unexpected arguments"}, nil},
		{"missing watches file", []string{"run", "--watches-file", filepath.Join(dir, "absent.yaml")}, ExitConfig,
			[]string{"invalid watches file", "absent.yaml", "no such file"}, nil},
		{"malformed watches file", []string{"run", "--watches-file", bad}, ExitConfig,
			[]string{"invalid watches file " + bad, `entry 0 (kind "Broken"): field "chart"`}, nil},
		{"bad metrics address", []string{"run", "--watches-file", "../../watches.yaml", "--kubeconfig", writeKubeconfig(t), "--metrics-bind-address", "nonsense"},
			ExitConfig, []string{`metrics address "nonsense"`}, nil},
		{"secure metrics flags in run -h", []string{"run", "-h"}, ExitOK, []string{"-metrics-secure", "-metrics-cert-path", "-metrics-cert-name", "-metrics-cert-key"}, nil},
		{"metrics certificate without secure metrics", []string{"run", "--watches-file", "../../watches.yaml", "--kubeconfig", writeKubeconfig(t), "--metrics-cert-path", "/certs"},
			ExitConfig, []string{"--metrics-cert-path needs --metrics-secure"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main(tt.args, &out, &errOut)
			if code != tt.code {
				t.Errorf("exit code %d, want %d (stderr: %s)", code, tt.code, errOut.String())
			}
			for _, w := range tt.wantStderr {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr %q does not contain %q", errOut.String(), w)
				}
			}
			for _, w := range tt.wantStdout {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout %q does not contain %q", out.String(), w)
				}
			}
		})
	}
}

// writeKubeconfig writes a syntactically valid kubeconfig for a server that
// is never contacted.
func writeKubeconfig(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "kubeconfig")
	kc := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
