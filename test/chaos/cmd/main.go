// Command chaos runs chartkeeper's chaos harness (test/chaos) on a
// local cluster of its own, which it starts, crashes and restarts, and
// purges at the end: make chaos. Settings come from the environment:
//
//	CHAOS_CRS=24            custom resources
//	CHAOS_NAMESPACES=3      namespaces they are spread over
//	CHAOS_KINDS=3           kinds they are spread over (Chaos, ChaosKept, ChaosHooked)
//	CHAOS_DURATION=3m       how long faults and spec changes go on (at least)
//	CHAOS_KILLS=0           ... and until this many operator kills were made
//	CHAOS_MAX_DURATION=3×CHAOS_DURATION   but never longer than this
//	CHAOS_KILL_WEIGHT=1     each kill kind this many times per round
//	CHAOS_FAULT_EVERY=4s    mean pause between faults
//	CHAOS_CONFIGMAPS=60     most extra ConfigMaps of a release
//	CHAOS_CATCH_TIMEOUT=20s bound of a kill's wait for its target state
//	CHAOS_CONVERGE_TIMEOUT=5m  bound of each wait for convergence
//	CHAOS_FAULTS=all        all, or classic (the short run's faults)
//	CHAOS_SEED=<clock>      repeat a run's choices
//	CHAOS_OUT=tmp/chaos     where report.json, watches.yaml and logs go
//
// It prints the figures and exits 1 if anything was lost.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/chartkeeper/chartkeeper/test/chaos"
	"github.com/chartkeeper/chartkeeper/test/devcluster"
	"github.com/chartkeeper/chartkeeper/test/framework/envvar"
	"github.com/chartkeeper/chartkeeper/test/framework/harnesscmd"
)

func main() { harnesscmd.Main("chaos", run) }

func run(ctx context.Context) error {
	out := envvar.String("CHAOS_OUT", filepath.Join("tmp", "chaos"))
	cfg := chaos.Config{
		Chart:   filepath.Join("test", "e2e", "testdata", "charts", "app"),
		WorkDir: out,
		Log:     os.Stdout,
		Operator: []string{"bin/chartkeeper", "run", "--watches-file", "{watches}", "--kubeconfig", "{kubeconfig}",
			"--health-probe-bind-address", "{probe}", "--metrics-bind-address", "{metrics}",
			"--leader-elect", "--leader-election-namespace", "default",
			"--leader-elect-lease-duration", "6s", "--leader-elect-renew-deadline", "4s", "--leader-elect-retry-period", "1s"},
	}
	var err error
	if cfg.CRs, err = envvar.Int("CHAOS_CRS", 0); err != nil {
		return err
	}
	if cfg.Namespaces, err = envvar.Int("CHAOS_NAMESPACES", 0); err != nil {
		return err
	}
	if cfg.Kinds, err = envvar.Int("CHAOS_KINDS", 3); err != nil {
		return err
	}
	if cfg.MinKills, err = envvar.Int("CHAOS_KILLS", 0); err != nil {
		return err
	}
	if cfg.KillWeight, err = envvar.Int("CHAOS_KILL_WEIGHT", 0); err != nil {
		return err
	}
	if cfg.MaxConfigMaps, err = envvar.Int("CHAOS_CONFIGMAPS", 0); err != nil {
		return err
	}
	for name, d := range map[string]*time.Duration{"CHAOS_DURATION": &cfg.Duration, "CHAOS_MAX_DURATION": &cfg.MaxDuration,
		"CHAOS_CATCH_TIMEOUT": &cfg.CatchTimeout, "CHAOS_CONVERGE_TIMEOUT": &cfg.ConvergeTimeout} {
		if *d, err = positive(name); err != nil {
			return err
		}
	}
	switch f := envvar.String("CHAOS_FAULTS", "all"); f {
	case "all":
		cfg.Faults = chaos.AllFaults()
	case "classic":
		cfg.Faults = chaos.ClassicFaults()
	default:
		return fmt.Errorf("CHAOS_FAULTS=%q: want all or classic", f)
	}
	if cfg.FaultEvery, err = positive("CHAOS_FAULT_EVERY"); err != nil {
		return err
	}
	if s := os.Getenv("CHAOS_SEED"); s != "" {
		if cfg.Seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			return fmt.Errorf("CHAOS_SEED=%q: %w", s, err)
		}
	}
	// The operator is started again after every kill: run a copy, so that a
	// rebuild of bin/chartkeeper meanwhile does not change it mid-run.
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if cfg.Operator[0], err = copyFile(cfg.Operator[0], filepath.Join(out, "chartkeeper")); err != nil {
		return err
	}
	dir := filepath.Join(out, "cluster")
	fmt.Printf("chaos: starting a local cluster in %s\n", dir)
	c, purge, err := harnesscmd.Cluster(ctx, "chaos", devcluster.Config{Dir: dir, BinDir: "bin", Nodes: 2, Attached: true})
	if err != nil {
		return err
	}
	defer purge()
	cfg.Kubeconfig, cfg.Cluster = c.Kubeconfig(), c
	begin := time.Now()
	rep, err := chaos.Run(ctx, cfg)
	if rep != nil {
		fmt.Println()
		rep.Print(os.Stdout)
		if werr := rep.Write(filepath.Join(out, "report.json")); werr != nil {
			fmt.Fprintln(os.Stderr, "chaos:", werr)
		}
		fmt.Printf("report: %s; whole run %.0fs\n", filepath.Join(out, "report.json"), time.Since(begin).Seconds())
	}
	return err
}

// positive reads a duration setting: unset is 0 (the harness's default).
func positive(name string) (time.Duration, error) {
	d, set, err := envvar.Duration(name)
	if set && d == 0 {
		return 0, fmt.Errorf("%s=0: want a positive duration", name)
	}
	return d, err
}

// copyFile copies an executable to dst and returns dst.
func copyFile(src, dst string) (string, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	_ = os.Remove(dst) // a copy a running process still uses: write a new file
	return dst, os.WriteFile(dst, b, 0o755)
}
