package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/test/devcluster"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// chartkeeper run against a real cluster serves /healthz, /readyz,
// /metrics and, when asked, pprof profiles on loopback, and stops cleanly
// on SIGINT (Ctrl-C). The operator is confined to a namespace of its own
// (WATCH_NAMESPACE): the bundled kinds are other tests' too.
func TestOperatorServesProbesAndStopsCleanly(t *testing.T) {
	parallel(t, quick)
	env := testenv.Cluster(t)
	watchesFile := filepath.Join(testenv.RepoRoot(), "watches.yaml")
	installCRDs(t, env, watchesFile) // as every test of the bundled kinds applies them
	ns := env.Namespace(t)
	probe, metrics, pprof := freeAddr(t), freeAddr(t), freeAddr(t)
	cmd := exec.Command(operatorBinary(t), "run",
		"--kubeconfig", env.Kubeconfig,
		"--watches-file", watchesFile,
		"--health-probe-bind-address", probe,
		"--metrics-bind-address", metrics,
		"--pprof-bind-address", pprof)
	cmd.Env = append(withoutEnv(os.Environ(), "WATCH_NAMESPACE"), "WATCH_NAMESPACE="+ns)
	p := start(t, cmd)
	for _, url := range []string{"http://" + probe + "/healthz", "http://" + probe + "/readyz", "http://" + metrics + "/metrics",
		"http://" + pprof + "/debug/pprof/cmdline"} {
		p.eventually(t, time.Minute, get200(url))
	}
	if err := p.interrupt(t, 30*time.Second); err != nil {
		t.Fatalf("exit after SIGINT: %v\n%s", err, p.out.String())
	}
	out := p.out.String()
	if !strings.Contains(out, `"gvk":"apps.chartkeeper.dev/v1alpha1, Kind=WebApp"`) {
		t.Errorf("the loaded watch was not logged:\n%s", out)
	}
}

// A malformed watches file stops the operator before it touches a cluster,
// with exit code 2 and a message naming the entry and field.
func TestOperatorRejectsBadWatchesFile(t *testing.T) {
	parallel(t, quick) // no cluster
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	content := "- group: apps.chartkeeper.dev\n  version: v1alpha1\n  kind: WebApp\n  chart: " +
		filepath.Join(testenv.RepoRoot(), "charts", "webapp") + "\n- group: apps.chartkeeper.dev\n  version: v1alpha1\n  kind: Cache\n  chart: ./missing\n"
	if err := os.WriteFile(bad, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(operatorBinary(t), "run", "--watches-file", bad).CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 2 {
		t.Fatalf("want exit code 2, got %v\n%s", err, out)
	}
	if !strings.Contains(string(out), `entry 1 (kind "Cache"): field "chart"`) {
		t.Errorf("message does not name the bad entry:\n%s", out)
	}
}

// make run: with no KUBECONFIG it brings up the local cluster and runs the
// operator on it; with a KUBECONFIG that answers it uses that cluster.
// On the shared cluster the operator make run starts is confined to a
// namespace of its own by WATCH_NAMESPACE, which it inherits through make
// and hack/run.sh (the bundled kinds are other tests' too); the CRDs make
// run applies (config/crd/bases) are the ones every test of the bundled
// kinds applies: their specs do not change. The local cluster make run
// brings up is its own, in the subtest's temporary directory.
func TestMakeRun(t *testing.T) {
	parallel(t, 65*time.Second)
	env := testenv.Cluster(t)
	operatorBinary(t) // fail early on a build error
	cases := []struct {
		name       string
		kubeconfig string
		want       string
	}{
		{"no KUBECONFIG: local cluster", "", "run: using the local cluster in"},
		{"KUBECONFIG answers: use it", env.Kubeconfig, "run: using the cluster of KUBECONFIG=" + env.Kubeconfig},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			environ := withoutEnv(withoutEnv(os.Environ(), "KUBECONFIG"), "WATCH_NAMESPACE")
			environ = append(environ, "KUBECONFIG="+tc.kubeconfig)
			if tc.kubeconfig != "" {
				environ = append(environ, "WATCH_NAMESPACE="+env.Namespace(t))
			}
			clusterDir := filepath.Join(t.TempDir(), "cluster")
			t.Cleanup(func() {
				if err := devcluster.Purge(clusterDir, nil); err != nil {
					t.Errorf("stopping the cluster make run started: %v", err)
				}
			})
			// The probe port is picked here, before make run starts a cluster in
			// another process, which picks ports of its own and may take it
			// first: then the operator cannot listen, and make run is tried
			// again (twice at most). Metrics are off: the test reads none.
			var probe string
			var p *process
			for attempt := 1; ; attempt++ {
				probe = freeAddr(t)
				cmd := exec.Command("make", "--no-print-directory", "run", "CLUSTER_DIR="+clusterDir, "NODES=1",
					"PROBE_ADDR="+probe, "METRICS_ADDR=0")
				cmd.Dir = testenv.RepoRoot()
				cmd.Env = environ
				p = start(t, cmd)
				if attempt == 2 || !probeTaken(p, probe) {
					break
				}
			}
			p.eventually(t, 3*time.Minute, get200("http://"+probe+"/healthz"))
			p.eventually(t, time.Minute, get200("http://"+probe+"/readyz"))
			_ = p.interrupt(t, 30*time.Second) // make reports the interrupt as an error
			if !strings.Contains(p.out.String(), tc.want) {
				t.Errorf("output does not say %q:\n%s", tc.want, p.out.String())
			}
			if !strings.Contains(p.out.String(), "chartkeeper stopped") {
				t.Errorf("the operator did not stop cleanly on Ctrl-C:\n%s", p.out.String())
			}
		})
	}
}

func withoutEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// probeTaken waits (at most 3 minutes) until the operator make run started
// serves its probes or make exits, and reports whether it exited because
// the probe address was taken.
func probeTaken(p *process, probe string) bool {
	for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		select {
		case err := <-p.done:
			p.done <- err
			return strings.Contains(p.out.String(), "bind: address already in use")
		default:
		}
		if get200("http://"+probe+"/healthz")(context.Background()) == nil {
			return false
		}
	}
	return false
}
