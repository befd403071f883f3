package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/test/chaos"
	"github.com/chartkeeper/chartkeeper/test/devcluster"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// The short chaos run of make test (make chaos is the long one): on a local
// cluster of its own, since it crashes the API server and etcd, a few
// custom resources under spec changes while the operator is killed in each
// kind of operation, the API server and etcd restart, and released objects
// are deleted and edited. Nothing may be lost.
func TestChaosShort(t *testing.T) {
	parallel(t, 110*time.Second)
	if testing.Short() {
		t.Skip("the chaos run takes minutes")
	}
	dir := t.TempDir()
	ctx := context.Background()
	c, err := devcluster.Up(ctx, devcluster.Config{Dir: filepath.Join(dir, "cluster"), BinDir: testenv.BinDir(), Nodes: 1, Attached: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := devcluster.Down(filepath.Join(dir, "cluster"), nil); err != nil {
			t.Errorf("stopping the chaos cluster: %v", err)
		}
	})
	var log strings.Builder
	rep, err := chaos.Run(ctx, chaos.Config{
		Kubeconfig: c.Kubeconfig(),
		Cluster:    c,
		Operator: []string{operatorBinary(t), "run", "--watches-file", "{watches}", "--kubeconfig", "{kubeconfig}",
			"--health-probe-bind-address", "{probe}", "--metrics-bind-address", "0",
			"--leader-elect", "--leader-election-namespace", "default",
			"--leader-elect-lease-duration", "6s", "--leader-elect-renew-deadline", "4s", "--leader-elect-retry-period", "1s"},
		Chart:         filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "charts", "app"),
		WorkDir:       filepath.Join(dir, "work"),
		CRs:           8,
		Namespaces:    2,
		Duration:      time.Minute,
		FaultEvery:    2 * time.Second,
		MaxConfigMaps: 40,
		Log:           &log,
	})
	if rep != nil {
		rep.Print(&log)
	}
	t.Log("\n" + log.String())
	if err != nil {
		if b, rerr := os.ReadFile(filepath.Join(dir, "work", "operator.log")); rerr == nil {
			t.Logf("operator log (last 8 KiB):\n%s", tailBytes(b, 8<<10))
		}
		t.Fatal(err)
	}
	kinds, _, injected, _ := rep.FaultCounts()
	if len(kinds) != 8 {
		t.Errorf("fault kinds tried: %v, want all 8", kinds)
	}
	for _, k := range kinds {
		if injected[k] == 0 {
			t.Errorf("%s: never injected", k)
		}
	}
	// A kill that never caught an operation half-done proves nothing about
	// unlocking: at least one must have left its release's latest revision
	// pending (read right after the kill, before the next operator).
	if rep.PendingKills() == 0 {
		t.Errorf("no kill left a revision pending (%d kills): the run never tested recovery from a half-done operation", rep.Kills())
	}
	for _, f := range rep.Faults {
		if f.Caught && (f.Kind == chaos.KillMidInstall || f.Kind == chaos.KillMidUpgrade || f.Kind == chaos.KillMidRollback || f.Kind == chaos.KillMidUninstall) && f.AfterKill == "" {
			t.Errorf("%s on %s: caught, but no status read after the kill", f.Kind, f.Target)
		}
	}
	if rep.Failed == 0 || rep.Explained != rep.Failed {
		t.Errorf("specs that cannot be released: %d, explained %d", rep.Failed, rep.Explained)
	}
	if rep.Lost != 0 || rep.LiveChecked == 0 {
		t.Errorf("lost %d, live releases checked %d", rep.Lost, rep.LiveChecked)
	}
}

func tailBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
