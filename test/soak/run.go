package soak

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
	"github.com/chartkeeper/chartkeeper/test/bench"
	"github.com/chartkeeper/chartkeeper/test/framework/childproc"
	"github.com/chartkeeper/chartkeeper/test/framework/freeport"
	"github.com/chartkeeper/chartkeeper/test/framework/kubeops"
)

// writers is how many requests the set-up has in flight.
const writers = 16

// reserve is the time kept, besides Config.ConvergeTimeout, between the
// end of the churn and a hard deadline: to stop the operator and write the
// results (the caller then stops the cluster).
const reserve = 90 * time.Second

// Result is what a run measured and concluded.
type Result struct {
	Config  Config
	Samples []Sample
	Verdict Verdict
	// Writes are the churn's successful writes by kind; Failed the writes
	// that failed (an API error, or no answer within 30 s).
	Writes map[string]int
	Failed int
	// SetupSeconds is the time to create every custom resource and see all
	// Ready; ChurnSeconds how long the churn ran; ConvergeSeconds the time
	// to all Ready after it.
	SetupSeconds, ChurnSeconds, ConvergeSeconds float64
	// Shortened says why the churn ran for less than Config.Duration, if
	// it did: the set-up took so long that the whole of it would have
	// crossed the hard deadline (the context's).
	Shortened string
}

// Run runs the soak on the cluster of cfg.Kubeconfig. It always returns a
// Result with what it measured, written to cfg.OutDir (soak.csv, the plot
// soak.svg and soak.png, verdict.txt) even when interrupted; the error is
// nil only when the verdict passes.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	res := &Result{Config: cfg, Verdict: Verdict{MaxGrowth: cfg.MaxGrowth}}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, err
	}
	err = res.run(ctx, cfg)
	if err != nil {
		res.Verdict.Problems = append(res.Verdict.Problems, err.Error())
	}
	res.Verdict.Trends = JudgeAll(res.Samples, cfg.MaxGrowth)
	if werr := res.write(); werr != nil {
		fmt.Fprintf(cfg.Log, "soak: writing results: %v\n", werr)
	}
	if err == nil && !res.Verdict.OK() {
		err = errors.New("the verdict failed (verdict.txt)")
	}
	return res, err
}

func (res *Result) run(ctx context.Context, cfg Config) error {
	c, err := kubeops.Connect(cfg.Kubeconfig, 100, 30*time.Second)
	if err != nil {
		return err
	}
	watchesPath := filepath.Join(cfg.OutDir, "watches.yaml")
	if err := writeWatches(watchesPath, cfg); err != nil {
		return err
	}
	ws, err := watches.Load(watchesPath)
	if err != nil {
		return err
	}
	crd, _, err := manifests.CRD(ws[0], nil, manifests.CRDOptions{})
	if err != nil {
		return err
	}
	if err := kubeops.InstallCRD(ctx, c.Config, crd); err != nil {
		return err
	}
	var namespaces []string
	for i := range (cfg.CRs + cfg.PerNamespace - 1) / cfg.PerNamespace {
		namespaces = append(namespaces, fmt.Sprintf("soak-%d", i))
	}
	if err := kubeops.CreateNamespaces(ctx, c.Typed, namespaces); err != nil {
		return err
	}

	// The operator.
	metrics, err := freeport.Addr()
	if err != nil {
		return err
	}
	probe, err := freeport.Addr()
	if err != nil {
		return err
	}
	args := make([]string, len(cfg.Operator))
	rep := strings.NewReplacer("{watches}", watchesPath, "{kubeconfig}", cfg.Kubeconfig, "{metrics}", metrics, "{probe}", probe)
	for i, a := range cfg.Operator {
		args[i] = rep.Replace(a)
	}
	logPath := filepath.Join(cfg.OutDir, "operator.log")
	_ = os.Remove(logPath)
	op, err := childproc.Start(args, []string{"KUBECONFIG=" + cfg.Kubeconfig}, logPath)
	if err != nil {
		return err
	}
	defer func() {
		if err := op.Stop(30 * time.Second); err != nil {
			fmt.Fprintf(cfg.Log, "soak: stopping the operator: %v\n", err)
		}
	}()
	fmt.Fprintf(cfg.Log, "soak: operator pid %d, metrics http://%s/metrics, log %s\n", op.PID(), metrics, logPath)
	alive := func() error {
		if err, done := op.Exited(); done {
			return fmt.Errorf("the operator exited: %v (log: %s)", err, logPath)
		}
		return nil
	}
	if err := kubeops.WaitFor(ctx, 2*time.Minute, "the operator's /readyz", func(ctx context.Context) (bool, error) {
		return childproc.Probe(ctx, "http://"+probe+"/readyz") == nil, alive()
	}); err != nil {
		return err
	}

	// Set-up: every custom resource created, all Ready.
	w := newWorkload(c.Dynamic, namespaces, cfg.CRs)
	began := time.Now()
	fmt.Fprintf(cfg.Log, "soak: creating %d custom resources in %d namespaces\n", cfg.CRs, len(namespaces))
	if err := eachSlot(ctx, w, w.ensure); err != nil {
		return fmt.Errorf("set-up: %w", err)
	}
	if err := allReady(ctx, w, cfg.SetupTimeout, alive); err != nil {
		return fmt.Errorf("set-up: %w", err)
	}
	res.SetupSeconds = time.Since(began).Seconds()
	// The churn ends early enough for the convergence check and the
	// clean-up to finish before the hard deadline, if there is one.
	duration := cfg.Duration
	if d, ok := ctx.Deadline(); ok {
		if left := time.Until(d) - cfg.ConvergeTimeout - reserve; left < duration {
			duration = max(left, 0).Truncate(cfg.Sample)
			res.Shortened = fmt.Sprintf("churn shortened from %s to %s: the set-up took %.0fs and the hard deadline is %s",
				cfg.Duration, duration, res.SetupSeconds, d.UTC().Format(time.TimeOnly))
			fmt.Fprintf(cfg.Log, "soak: %s\n", res.Shortened)
		}
	}
	fmt.Fprintf(cfg.Log, "soak: %d Ready after %.0fs; churning %.1f changes/s for %s, a sample every %s\n", cfg.CRs, res.SetupSeconds, cfg.Rate, duration, cfg.Sample)

	// The churn, sampled.
	sm := &sampler{pid: op.PID(), metricsURL: "http://" + metrics + "/metrics", w: w}
	if err := sm.start(ctx); err != nil {
		return err
	}
	setupWrites, setupFailed := w.counts()
	churnCtx, stopChurn := context.WithCancel(ctx)
	var wg sync.WaitGroup
	churnBegan := time.Now()
	wg.Go(func() { w.churn(churnCtx, rand.New(rand.NewPCG(cfg.Seed, 1)), cfg.Rate) })
	err = res.sample(ctx, cfg, duration, sm, alive)
	stopChurn()
	wg.Wait()
	res.ChurnSeconds = time.Since(churnBegan).Seconds()
	res.Writes, res.Failed = w.counts()
	res.Failed -= setupFailed
	for k, v := range setupWrites {
		res.Writes[k] -= v
	}
	if err != nil {
		return err
	}

	// Convergence: every deleted resource re-created, then all Ready for
	// their spec as the API server holds it.
	began = time.Now()
	scenario, err := bench.LookupScenario(bench.ScenarioDefault)
	if err != nil {
		return err
	}
	if err := eachSlot(ctx, w, w.ensure); err != nil {
		return fmt.Errorf("after the churn: %w", err)
	}
	var problems []string
	err = kubeops.WaitFor(ctx, cfg.ConvergeTimeout, "every custom resource Ready for its last spec", func(ctx context.Context) (bool, error) {
		var err error
		if problems, err = converged(ctx, w, c.Typed, scenario.Selector); err == nil && len(problems) == 0 {
			return true, nil
		}
		return false, pause(ctx, alive) // not yet, or the API server is busy: ask again
	})
	res.ConvergeSeconds = time.Since(began).Seconds()
	if err != nil {
		return fmt.Errorf("%w: %d not converged, first: %s", err, len(problems), strings.Join(first(problems, 5), "; "))
	}
	res.Verdict.Converged = true
	fmt.Fprintf(cfg.Log, "soak: all %d Ready for their last spec %.0fs after the churn\n", cfg.CRs, res.ConvergeSeconds)
	return nil
}

// sample takes a sample every cfg.Sample until duration has passed.
func (res *Result) sample(ctx context.Context, cfg Config, duration time.Duration, sm *sampler, alive func() error) error {
	start := time.Now()
	tick := time.NewTicker(cfg.Sample)
	defer tick.Stop()
	fmt.Fprintf(cfg.Log, "  %8s %8s %8s %10s %8s %10s %10s %6s %10s\n", "elapsed", "RSS MiB", "heap MiB", "goroutines", "open fds", "API req/s", "reconciles", "CPU %", "ready/live")
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("stopped after %s of %s: %w", time.Since(start).Round(time.Second), duration, context.Cause(ctx))
		case <-tick.C:
		}
		if err := alive(); err != nil {
			return err
		}
		elapsed := time.Since(start)
		s, err := sm.take(ctx, elapsed.Round(time.Second))
		// A busy API server may fail a LIST now and then: two more tries.
		for try := 1; err != nil && try < 3 && ctx.Err() == nil && alive() == nil; try++ {
			fmt.Fprintf(cfg.Log, "  sample at %s: %v; trying again in 5s\n", elapsed.Round(time.Second), err)
			time.Sleep(5 * time.Second)
			s, err = sm.take(ctx, elapsed.Round(time.Second))
		}
		if err != nil {
			if ctx.Err() != nil {
				continue // reported by the next select
			}
			return fmt.Errorf("sampling at %s: %w", elapsed.Round(time.Second), err)
		}
		res.Samples = append(res.Samples, s)
		fmt.Fprintf(cfg.Log, "  %8s %8.1f %8.1f %10.0f %8.0f %10.1f %10.0f %6.1f %5d/%-4d\n", s.Elapsed, s.RSSMiB, s.HeapMiB, s.Goroutines, s.OpenFDs, s.APIRate, s.Reconciles, s.CPUPercent, s.Ready, s.Live)
		if elapsed+cfg.Sample/2 >= duration {
			return nil
		}
	}
}

// eachSlot calls fn for every slot from writers goroutines and returns the
// first error.
func eachSlot(ctx context.Context, w *workload, fn func(context.Context, *slot) error) error {
	ch := make(chan *slot)
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for s := range ch {
				if err := fn(ctx, s); err != nil {
					select {
					case errs <- fmt.Errorf("%s: %w", s.key, err):
					default:
					}
				}
			}
		})
	}
	for _, s := range w.slots {
		if len(errs) > 0 || ctx.Err() != nil {
			break
		}
		ch <- s
	}
	close(ch)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

// allReady waits until every custom resource is Ready for its generation.
func allReady(ctx context.Context, w *workload, timeout time.Duration, alive func() error) error {
	ready, notReady := 0, map[string]string{}
	err := kubeops.WaitFor(ctx, timeout, fmt.Sprintf("%d custom resources Ready", len(w.slots)), func(ctx context.Context) (bool, error) {
		var err error
		if _, ready, notReady, err = readiness(ctx, w); err == nil && ready == len(w.slots) {
			return true, nil
		}
		return false, pause(ctx, alive)
	})
	if err != nil {
		for k, why := range notReady {
			return fmt.Errorf("%w: %d Ready; %s: %s", err, ready, k, why)
		}
	}
	return err
}

// pause waits 2 s between two LISTs of every custom resource (more often
// would load the API server for nothing) and returns alive's error.
func pause(ctx context.Context, alive func() error) error {
	select {
	case <-ctx.Done():
	case <-time.After(2 * time.Second):
	}
	return alive()
}

// writeWatches writes the operator's watches.yaml.
func writeWatches(path string, cfg Config) error {
	body := fmt.Sprintf(`# The soak's watches.yaml (test/soak).
- group: %s
  version: %s
  kind: %s
  chart: %s
  maxConcurrentReconciles: 10
  maxHistory: %d
`, gvk.Group, gvk.Version, gvk.Kind, cfg.Chart, cfg.MaxHistory)
	return os.WriteFile(path, []byte(body), 0o644)
}

// write saves soak.csv, soak.svg and verdict.txt.
func (res *Result) write() error {
	dir := res.Config.OutDir
	var b strings.Builder
	res.Print(&b)
	return errors.Join(
		WriteCSV(filepath.Join(dir, "soak.csv"), res.Samples),
		Plot(filepath.Join(dir, "soak.svg"), res.title(), res.Samples, res.Verdict.Trends),
		Plot(filepath.Join(dir, "soak.png"), res.title(), res.Samples, res.Verdict.Trends),
		os.WriteFile(filepath.Join(dir, "verdict.txt"), []byte(b.String()), 0o644),
	)
}

func first(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
