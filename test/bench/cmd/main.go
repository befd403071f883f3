// Command bench times chartkeeper against the floor of the control plane
// and, optionally, a peer operator, on a local cluster it brings up (make
// bench). Besides times, API requests and the operators' CPU and memory,
// it records the CPU time the local cluster's processes (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, kwok) use in
// each phase. Settings come from the environment:
//
//	BENCH_N            custom resources (default 100), or a comma list of sizes run one after another (100,500,1000)
//	BENCH_REPEAT       runs of the whole measurement on the same cluster; the table shows medians and spread (default 1)
//	BENCH_SCENARIO     the workload: default (test/bench/chart) or podinfo (test/bench/podinfo)
//	BENCH_CONCURRENCY  maxConcurrentReconciles of the operators and writers of the floor (default 10)
//	BENCH_IDLE         length of the idle phase (default 60s)
//	BENCH_TIMEOUT      bound of each phase (default max(5m, N x 2s))
//	BENCH_OPERATOR     a peer: "hop" (helm-operator-plugins v0.9.1, make peers) or a command line
//	BENCH_OPERATOR_NAME  the peer's name in results (default "peer", "helm-operator" for hop)
//	BENCH_PPROF        set to 1: CPU profiles of chartkeeper's install and upgrade in the output directory
//	BENCH_OUT          output directory (default bench-results/<time>[-<scenario>]-n<N>[-<N>...]; one n<N>/ per size when several)
//	BENCH_KUBECONFIG   measure on this cluster instead of bringing one up (no control-plane CPU figures then)
//	BENCH_CLUSTER_DIR  where the local cluster lives (default tmp/bench-cluster; deleted afterwards)
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/chartkeeper/chartkeeper/test/bench"
	"github.com/chartkeeper/chartkeeper/test/devcluster"
	"github.com/chartkeeper/chartkeeper/test/framework/envvar"
	"github.com/chartkeeper/chartkeeper/test/framework/harnesscmd"
)

// podsPerNode is each kwok node's capacity, as on a real node.
const podsPerNode = 110

// nodesFor is how many nodes n releases need: room for every release's
// old and new Pod at once, as an upgrade of all of them rolls out (at
// least 3). With room for a quarter more, a run of 10,000 stalled: the
// new Pods filled the nodes, the rest stayed Pending, and the controller
// manager, backing off between retries, took the old Pods away too slowly
// for the rollouts to finish.
func nodesFor(n int) int {
	return max(3, (2*n+podsPerNode-1)/podsPerNode)
}

func main() { harnesscmd.Main("bench", run) }

func run(ctx context.Context) error {
	sizes, err := bench.ParseSizes(os.Getenv("BENCH_N"))
	if err != nil {
		return err
	}
	repeat, err := envvar.Int("BENCH_REPEAT", 1)
	if err != nil {
		return err
	}
	scenario, err := bench.LookupScenario(os.Getenv("BENCH_SCENARIO"))
	if err != nil {
		return err
	}
	conc, err := envvar.Int("BENCH_CONCURRENCY", 10)
	if err != nil {
		return err
	}
	idle, err := benchDuration("BENCH_IDLE")
	if err != nil {
		return err
	}
	timeout, err := benchDuration("BENCH_TIMEOUT")
	if err != nil {
		return err
	}
	subjects := []bench.Subject{
		{Name: bench.SubjectChartkeeper, Command: []string{abs("bin/chartkeeper"), "run",
			"--kubeconfig={kubeconfig}", "--watches-file={watches}",
			"--metrics-bind-address={metrics}", "--health-probe-bind-address=0", "--pprof-bind-address={pprof}"}},
		{Name: bench.SubjectFloor},
	}
	if peer, err := peerSubject(); err != nil {
		return err
	} else if peer != nil {
		subjects = append(subjects, *peer)
	}
	for _, s := range subjects {
		if s.Command != nil {
			if _, err := os.Stat(s.Command[0]); err != nil {
				return fmt.Errorf("subject %s: %w (make build, make peers)", s.Name, err)
			}
		}
	}
	out := os.Getenv("BENCH_OUT")
	if out == "" {
		out = filepath.Join("bench-results", time.Now().UTC().Format("20060102-150405")+outSuffix(scenario.Name, sizes))
	}
	cfg := bench.Config{
		Chart: scenario.Chart, Scenario: scenario.Name, Subjects: subjects, Concurrency: conc, Idle: idle, PhaseTimeout: timeout,
		Repeat: repeat, Machine: machine(), Log: os.Stderr,
	}
	cfg.Kubeconfig = os.Getenv("BENCH_KUBECONFIG")
	if cfg.Kubeconfig == "" {
		dir := os.Getenv("BENCH_CLUSTER_DIR")
		if dir == "" {
			dir = filepath.Join("tmp", "bench-cluster")
		}
		n := slices.Max(sizes)
		nodes := nodesFor(n)
		fmt.Fprintf(os.Stderr, "bench: starting a local cluster with %d kwok nodes in %s\n", nodes, dir)
		c, purge, err := harnesscmd.Cluster(ctx, "bench", devcluster.Config{Dir: dir, BinDir: "bin", Nodes: nodes, PodsPerNode: podsPerNode, Attached: true, Log: os.Stderr,
			Profiling: os.Getenv("BENCH_PPROF") != ""})
		if err != nil {
			return err
		}
		defer purge()
		cfg.Kubeconfig = c.Kubeconfig()
		cfg.ControlPlane = controlPlane(c.State())
	}
	var results []*bench.Result
	var runErr error
	for _, n := range sizes {
		cfg.N, cfg.OutDir = n, out
		if len(sizes) > 1 {
			cfg.OutDir = filepath.Join(out, fmt.Sprintf("n%d", n))
		}
		cfg.ProfileDir = ""
		if os.Getenv("BENCH_PPROF") != "" {
			cfg.ProfileDir = filepath.Join(cfg.OutDir, "pprof")
		}
		if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
			return err
		}
		res, err := bench.Run(ctx, cfg)
		if res != nil {
			results = append(results, res)
			fmt.Println()
			fmt.Print(res.Table() + res.Breakdown())
			fmt.Printf("\nresults: %s (result.json, table.txt, convergence.png)\n", cfg.OutDir)
		}
		if runErr = err; err != nil {
			break
		}
	}
	if summary := bench.SizesTable(results); summary != "" {
		fmt.Print("\n" + summary)
		if err := os.WriteFile(filepath.Join(out, "summary.txt"), []byte(summary), 0o644); err != nil {
			return err
		}
		fmt.Printf("\nsummary: %s\n", filepath.Join(out, "summary.txt"))
	}
	return runErr
}

// controlPlane is the PIDs of the cluster's processes by component, for
// the CPU time they use in each phase.
func controlPlane(st devcluster.State) map[string]int {
	out := make(map[string]int, len(st.Procs))
	for name, p := range st.Procs {
		if p.PID > 0 {
			out[name] = p.PID
		}
	}
	return out
}

// outSuffix names the default output directory after the scenario (unless
// default) and the sizes.
func outSuffix(scenario string, sizes []int) string {
	s := ""
	if scenario != bench.ScenarioDefault {
		s = "-" + scenario
	}
	for i, n := range sizes {
		if i == 0 {
			s += fmt.Sprintf("-n%d", n)
		} else {
			s += fmt.Sprintf("-%d", n)
		}
	}
	return s
}

// peerSubject reads BENCH_OPERATOR.
func peerSubject() (*bench.Subject, error) {
	cmd := strings.TrimSpace(os.Getenv("BENCH_OPERATOR"))
	if cmd == "" {
		return nil, nil
	}
	name := os.Getenv("BENCH_OPERATOR_NAME")
	var words []string
	if cmd == "hop" {
		words = []string{abs("bin/helm-operator"), "run", "--watches-file={watches}",
			"--max-concurrent-reconciles={concurrency}", "--metrics-bind-address=0", "--health-probe-bind-address=0"}
		if name == "" {
			name = "helm-operator"
		}
	} else {
		words = strings.Fields(cmd)
	}
	if name == "" {
		name = "peer"
	}
	return &bench.Subject{Name: name, Command: words}, nil
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}

// machine describes this machine for the record.
func machine() string {
	model := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %.0f GiB", float64(kb)/(1<<20))
		}
	}
	s := fmt.Sprintf("%d CPUs%s, %s", runtime.NumCPU(), mem, runtime.Version())
	if model != "" {
		s = model + ", " + s
	}
	return s
}

// benchDuration reads a duration setting: unset is 0 (the default), an
// explicit 0 is -1 (skip).
func benchDuration(name string) (time.Duration, error) {
	d, set, err := envvar.Duration(name)
	if set && d == 0 {
		d = -1
	}
	return d, err
}
