package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/test/bench"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// TestBenchSmoke runs the benchmark harness (make bench) small, on the
// shared cluster: chartkeeper and the floor through every phase. It checks
// that each is measured, not how fast it is.
func TestBenchSmoke(t *testing.T) {
	parallel(t, 75*time.Second)
	env := testenv.Cluster(t)
	out := t.TempDir()
	var log strings.Builder
	res, err := bench.Run(context.Background(), bench.Config{
		Kubeconfig: env.Kubeconfig,
		Chart:      filepath.Join(testenv.RepoRoot(), "test", "bench", "chart"),
		Subjects: []bench.Subject{
			{Name: bench.SubjectChartkeeper, Command: []string{operatorBinary(t), "run", "--kubeconfig={kubeconfig}", "--watches-file={watches}",
				"--metrics-bind-address=0", "--health-probe-bind-address=0", "--pprof-bind-address={pprof}"}},
			{Name: bench.SubjectFloor},
		},
		N: 6, PerNamespace: 3, Concurrency: 2, Idle: 2 * time.Second, PhaseTimeout: 3 * time.Minute,
		OutDir: out, ProfileDir: filepath.Join(out, "pprof"), ProfileSeconds: 1, Log: &log,
	})
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	ck, floor := res.Subjects[0], res.Subjects[1]
	for _, s := range res.Subjects {
		if s.Error != "" {
			t.Fatalf("%s: %s", s.Name, s.Error)
		}
	}
	wantPhases := map[string][]string{
		bench.SubjectChartkeeper: {bench.PhaseInstall, bench.PhaseIdle, bench.PhaseUpgrade, bench.PhaseDelete},
		bench.SubjectFloor:       {bench.PhaseInstall, bench.PhaseUpgrade, bench.PhaseDelete},
	}
	for _, s := range []bench.SubjectResult{ck, floor} {
		var names []string
		for _, p := range s.Phases {
			names = append(names, p.Name)
			if !p.Complete {
				t.Errorf("%s %s did not complete", s.Name, p.Name)
			}
			for _, m := range p.Milestones {
				if m.Reached != 6 || m.Seconds == nil || len(m.Times) != 6 {
					t.Errorf("%s %s %s: %d of 6 reached", s.Name, p.Name, m.Name, m.Reached)
				}
			}
			if p.Name != bench.PhaseIdle && p.APIRequests < 6 {
				t.Errorf("%s %s: %v API requests counted for 6 releases", s.Name, p.Name, p.APIRequests)
			}
		}
		if strings.Join(names, ",") != strings.Join(wantPhases[s.Name], ",") {
			t.Errorf("%s phases: %v", s.Name, names)
		}
	}
	if ck.CPUSeconds == nil || *ck.CPUSeconds <= 0 || ck.PeakRSSBytes == nil || *ck.PeakRSSBytes < 10<<20 {
		t.Errorf("chartkeeper's process usage was not read: cpu %v, rss %v", ck.CPUSeconds, ck.PeakRSSBytes)
	}
	if floor.CPUSeconds != nil {
		t.Error("the floor has no process, yet has a CPU time")
	}
	for _, f := range []string{"result.json", "table.txt", "convergence.png", "pprof/chartkeeper-install.pprof", "pprof/chartkeeper-heap.pprof"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if table := res.Table(); !strings.Contains(table, "chartkeeper/floor") {
		t.Errorf("table:\n%s", table)
	}
}
