// Command soak runs chartkeeper's hour of churn (test/soak) on a local
// cluster of its own, which it purges at the end whatever happens: make
// soak. Settings come from the environment:
//
//	SOAK_CRS=1000          custom resources
//	SOAK_DURATION=60m      how long the churn goes on
//	SOAK_RATE=2            changes per second (spec changes, deletes, re-creates)
//	SOAK_SAMPLE=1m         time between samples
//	SOAK_MAX_GROWTH=20     bound, in percent of the mean per hour, on the growth of RSS, goroutines and open fds over the second half
//	SOAK_SEED=<clock>      the churn's random choices
//	SOAK_OUT=tmp/soak      where soak.csv, soak.svg, verdict.txt, watches.yaml and operator.log go (the cluster in $SOAK_OUT/cluster)
//
// The whole run is bounded by SOAK_DURATION + 10 minutes; SIGINT stops it
// early and still writes what it measured. It exits 1 when the verdict
// fails: a gated series grew over the bound, or the resources did not all
// converge.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/chartkeeper/chartkeeper/test/bench"
	"github.com/chartkeeper/chartkeeper/test/devcluster"
	"github.com/chartkeeper/chartkeeper/test/framework/envvar"
	"github.com/chartkeeper/chartkeeper/test/framework/harnesscmd"
	"github.com/chartkeeper/chartkeeper/test/soak"
)

// slack is how much longer than SOAK_DURATION the whole run may take:
// cluster, set-up, convergence and clean-up.
const slack = 10 * time.Minute

func main() { harnesscmd.Main("soak", run) }

func run(ctx context.Context) error {
	scenario, err := bench.LookupScenario(bench.ScenarioDefault)
	if err != nil {
		return err
	}
	out := envvar.String("SOAK_OUT", filepath.Join("tmp", "soak"))
	op, err := filepath.Abs(filepath.Join("bin", "chartkeeper"))
	if err != nil {
		return err
	}
	cfg := soak.Config{
		Chart: scenario.Chart, OutDir: out, Log: os.Stdout,
		Operator: []string{op, "run", "--kubeconfig={kubeconfig}", "--watches-file={watches}",
			"--metrics-bind-address={metrics}", "--health-probe-bind-address={probe}"},
	}
	if cfg.CRs, err = envvar.Int("SOAK_CRS", 1000); err != nil {
		return err
	}
	if cfg.Duration, err = positive("SOAK_DURATION", 60*time.Minute); err != nil {
		return err
	}
	if cfg.Sample, err = positive("SOAK_SAMPLE", time.Minute); err != nil {
		return err
	}
	if cfg.Rate, err = float("SOAK_RATE", 2); err != nil {
		return err
	}
	growth, err := float("SOAK_MAX_GROWTH", 20)
	if err != nil {
		return err
	}
	cfg.MaxGrowth = growth / 100
	if s := os.Getenv("SOAK_SEED"); s != "" {
		if cfg.Seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			return fmt.Errorf("SOAK_SEED=%q: %w", s, err)
		}
	}
	if _, err := os.Stat(op); err != nil {
		return fmt.Errorf("%w (make build)", err)
	}
	deadline := time.Now().Add(cfg.Duration + slack)
	ctx, cancel := context.WithDeadlineCause(ctx, deadline, errors.New("the hard deadline (SOAK_DURATION + 10m) passed"))
	defer cancel()
	fmt.Printf("soak: started %s, hard deadline %s\n", time.Now().UTC().Format(time.RFC3339), deadline.UTC().Format(time.RFC3339))

	dir := filepath.Join(out, "cluster")
	nodes := max(2, (2*cfg.CRs+999)/1000+1)
	fmt.Printf("soak: starting a local cluster (%d kwok nodes) in %s\n", nodes, dir)
	c, purge, err := harnesscmd.Cluster(ctx, "soak", devcluster.Config{Dir: dir, BinDir: "bin", Nodes: nodes, Attached: true})
	if err != nil {
		return err
	}
	defer purge()
	cfg.Kubeconfig = c.Kubeconfig()
	begin := time.Now()
	res, err := soak.Run(ctx, cfg)
	if res != nil {
		fmt.Println()
		res.Print(os.Stdout)
		fmt.Printf("results: %s (soak.csv, soak.svg, verdict.txt, operator.log); whole run %s\n",
			out, time.Since(begin).Round(time.Second))
	}
	return err
}

// positive reads a duration setting: unset is def, 0 an error.
func positive(name string, def time.Duration) (time.Duration, error) {
	d, set, err := envvar.Duration(name)
	if err != nil {
		return 0, err
	}
	if !set {
		return def, nil
	}
	if d == 0 {
		return 0, fmt.Errorf("%s=0: want a positive duration", name)
	}
	return d, nil
}

// float reads a positive number setting: unset is def.
func float(name string, def float64) (float64, error) {
	s := os.Getenv(name)
	if s == "" {
		return def, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive number", name, s)
	}
	return v, nil
}
