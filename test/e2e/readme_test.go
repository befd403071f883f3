package e2e

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// The README's walkthrough (the shell block after "Then, in another
// terminal:") runs as written against the local cluster, so the front door
// never goes stale. The operator runs on the repository's watches.yaml, as
// make run starts it, confined to a namespace of the test's, which the
// kubeconfig the commands get names as its default. A command fails the
// test if it exits non-zero; a `get` whose comment names READY and
// REVISION is read again until it shows them.
func TestReadmeWalkthrough(t *testing.T) {
	parallel(t, 20*time.Second)
	cmds := readmeWalkthrough(t)
	env, ns := bundledFixture(t)
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{webAppGVK}) }) // while the operator runs, if a step failed
	kubeconfig := kubeconfigInNamespace(t, env.Kubeconfig, ns)
	cache := t.TempDir() // a fresh discovery cache: the shared one may predate the CRDs
	for _, c := range cmds {
		run := func(ctx context.Context) (string, error) {
			cmd := exec.CommandContext(ctx, "bash", "-c", c.line)
			cmd.Dir = testenv.RepoRoot()
			cmd.Env = append(withoutEnv(os.Environ(), "KUBECONFIG"), "KUBECONFIG="+kubeconfig, "KUBECACHEDIR="+cache)
			out, err := cmd.CombinedOutput()
			if err != nil {
				return string(out), fmt.Errorf("%q: %v\n%s", c.line, err, out)
			}
			return string(out), nil
		}
		if c.revision == "" {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			out, err := run(ctx)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("$ %s\n%s", c.line, out)
			continue
		}
		testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
			out, err := run(ctx)
			if err != nil {
				return err
			}
			for _, row := range strings.Split(out, "\n")[1:] {
				if f := strings.Fields(row); len(f) >= 3 && f[1] == "True" && f[2] == c.revision {
					return nil
				}
			}
			return fmt.Errorf("%q does not show READY True, REVISION %s yet:\n%s", c.line, c.revision, out)
		})
	}
	if out := helmCmd(t, env, "list", "-n", ns, "-q"); strings.TrimSpace(out) != "" {
		t.Errorf("releases left after the walkthrough deleted its resource: %q", out)
	}
}

// walkthroughCommand is a command of the README's walkthrough; revision is
// the REVISION its comment says a get shows ("" for any other command).
type walkthroughCommand struct {
	line, revision string
}

var readyRevision = regexp.MustCompile(`REVISION (\d+)`)

// readmeWalkthrough reads the commands of the README's walkthrough: the
// first shell block after "Then, in another terminal:", without its
// comments and its export of KUBECONFIG (the test gives its own).
func readmeWalkthrough(t *testing.T) []walkthroughCommand {
	t.Helper()
	f, err := os.Open(filepath.Join(testenv.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []walkthroughCommand
	seen, in := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !seen:
			seen = strings.Contains(line, "Then, in another terminal:")
			continue
		case strings.HasPrefix(line, "```"):
			if in {
				return out
			}
			in = true
			continue
		case !in:
			continue
		}
		cmd, comment, _ := strings.Cut(line, " #")
		cmd = strings.TrimSpace(cmd)
		if cmd == "" || strings.HasPrefix(cmd, "#") || strings.HasPrefix(cmd, "export KUBECONFIG=") {
			continue
		}
		c := walkthroughCommand{line: cmd}
		if m := readyRevision.FindStringSubmatch(comment); m != nil && strings.Contains(cmd, " get ") {
			c.revision = m[1]
		}
		out = append(out, c)
	}
	t.Fatalf("README.md has no shell block after \"Then, in another terminal:\" (%v)", sc.Err())
	return nil
}

// kubeconfigInNamespace writes a copy of a kubeconfig whose current
// context's namespace is ns.
func kubeconfigInNamespace(t *testing.T, path, ns string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok {
		t.Fatalf("%s has no current context", path)
	}
	ctx.Namespace = ns
	out := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, out); err != nil {
		t.Fatal(err)
	}
	return out
}
