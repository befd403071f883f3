package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
	"github.com/chartkeeper/chartkeeper/test/framework/kubeops"
)

// maxHistory is the chaos watch's maxHistory; the check holds it.
const maxHistory = 5

// Run runs the chaos scenario on the cluster of cfg.Kubeconfig and returns
// its report. The error is nil only when the run finished and nothing was
// lost: Report.Lost is 0 and every problem list is empty. The namespaces it
// made are deleted at the end whatever the outcome (with a live operator,
// so finalizers go).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return nil, err
	}
	// A request to a dying API server must not hang the run: 15 s timeout.
	c, err := kubeops.Connect(cfg.Kubeconfig, 200, 15*time.Second)
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	admin, cs, dyn := c.Config, c.Typed, c.Dynamic
	suffix := fmt.Sprintf("%04x", cfg.Seed%0x10000)
	var namespaces []string
	for i := range cfg.Namespaces {
		namespaces = append(namespaces, fmt.Sprintf("chaos-%s-%d", suffix, i))
	}
	watchesPath, err := writeWatches(cfg.WorkDir, cfg.Chart)
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	if err := setUp(ctx, admin, cs, watchesPath, namespaces); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	fmt.Fprintf(cfg.Log, "chaos: seed %d, %d custom resources in %d namespaces, faults for %s (operator log: %s)\n",
		cfg.Seed, cfg.CRs, cfg.Namespaces, cfg.Duration, filepath.Join(cfg.WorkDir, "operator.log"))

	op := newSupervisor(cfg, watchesPath)
	opCtx, stopOp := context.WithCancel(context.WithoutCancel(ctx))
	var opDone sync.WaitGroup
	opDone.Go(func() { op.run(opCtx, watchesPath, cfg.Kubeconfig) })
	defer func() {
		bg := context.WithoutCancel(ctx)
		if err := kubeops.DeleteNamespaces(bg, cs, namespaces, 3*time.Minute); err != nil {
			fmt.Fprintf(cfg.Log, "chaos: cleaning up: %v\n", err)
		}
		stopOp()
		opDone.Wait()
	}()
	if err := op.ready(ctx, 2*time.Minute); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}

	w := newWorkload(dyn, namespaces, cfg.CRs)
	r := rand.New(rand.NewPCG(cfg.Seed, 1))
	// Three in four resources exist at the start; the rest are there to be
	// installed mid-run.
	for i, s := range w.slots {
		if i%4 != 3 {
			if err := w.create(ctx, s, w.next(r, cfg.MaxConfigMaps/4)); err != nil {
				return nil, fmt.Errorf("chaos: %w", err)
			}
		}
	}
	rep := &Report{Seed: cfg.Seed, CRs: cfg.CRs, Namespaces: cfg.Namespaces}
	began := time.Now()
	rep.Faults = shake(ctx, cfg, cs, w, op)
	rep.FaultSeconds = time.Since(began).Seconds()
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}

	// Settle: the operator runs, every resource gets its final spec.
	if err := op.ready(ctx, 3*time.Minute); err != nil {
		return rep, fmt.Errorf("chaos: after the faults: %w", err)
	}
	v := &verifier{cs: cs, w: w, namespaces: namespaces, maxHistory: maxHistory}
	// A spec that cannot be released must end in a settled failure that
	// says why, not in a pending release or a silent one.
	failing, err := failOnPurpose(ctx, w, r, cfg.MaxConfigMaps)
	if err != nil {
		return rep, fmt.Errorf("chaos: failing specs: %w", err)
	}
	unexplained, err := waitExplained(ctx, v, failing, cfg.ConvergeTimeout)
	if err != nil {
		return rep, fmt.Errorf("chaos: %w", err)
	}
	rep.Failed, rep.Explained = len(failing), len(failing)-subjects(unexplained)
	if err := finalSpecs(ctx, w, r, cfg.MaxConfigMaps); err != nil {
		return rep, fmt.Errorf("chaos: final specs: %w", err)
	}
	began = time.Now()
	problems, err := converge(ctx, cfg, v)
	rep.ConvergeSeconds = time.Since(began).Seconds()
	rep.Problems = append(unexplained, problems...)
	rep.fill(w, op)
	if err != nil {
		return rep, fmt.Errorf("chaos: %w", err)
	}
	if rep.Lost > 0 {
		return rep, fmt.Errorf("chaos: %d lost (seed %d): %s", rep.Lost, cfg.Seed, summarize(rep.Problems))
	}
	return rep, nil
}

// setUp installs the chaos CRD and creates the namespaces.
func setUp(ctx context.Context, admin *rest.Config, cs kubernetes.Interface, watchesPath string, namespaces []string) error {
	ws, err := watches.Load(watchesPath)
	if err != nil {
		return err
	}
	crd, _, err := manifests.CRD(ws[0], nil, manifests.CRDOptions{})
	if err != nil {
		return err
	}
	if err := kubeops.InstallCRD(ctx, admin, crd); err != nil {
		return err
	}
	return kubeops.CreateNamespaces(ctx, cs, namespaces)
}

// writeWatches writes the operator's watches.yaml: the chaos kind with a
// short remediation backoff, so that failures are retried within the run,
// and a short action timeout, so that a revision a killed operator left
// pending is taken as abandoned (and unlocked) within the run too.
func writeWatches(dir, chart string) (string, error) {
	path := filepath.Join(dir, "watches.yaml")
	body := fmt.Sprintf(`# The chaos harness's watches.yaml (test/chaos).
- group: %s
  version: %s
  kind: %s
  chart: %s
  maxConcurrentReconciles: 4
  maxHistory: %d
  timeout: 20s
  remediation:
    retries: 3
    backoff: {initial: 1s, max: 4s}
  readiness:
    timeout: 1m
`, gvk.Group, gvk.Version, gvk.Kind, chart, maxHistory)
	return path, os.WriteFile(path, []byte(body), 0o644)
}

// shake changes specs and injects faults until cfg.Duration has passed,
// and at least one round of every fault kind.
func shake(ctx context.Context, cfg Config, cs kubernetes.Interface, w *workload, op *supervisor) []Fault {
	churnCtx, stopChurn := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		r := rand.New(rand.NewPCG(cfg.Seed, 2))
		for churnCtx.Err() == nil {
			_ = w.change(churnCtx, r, cfg.MaxConfigMaps) // failures are counted by the workload
			sleep(churnCtx, jitter(r, cfg.ChangeEvery))
		}
	})
	defer func() { stopChurn(); wg.Wait() }()
	in := &injector{cfg: cfg, cs: cs, w: w, op: op, r: rand.New(rand.NewPCG(cfg.Seed, 3)), started: time.Now()}
	deadline := in.started.Add(cfg.Duration)
	var faults []Fault
	for round := 0; ctx.Err() == nil && (round == 0 || time.Now().Before(deadline)); round++ {
		kinds := in.kinds()
		in.r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
		for _, k := range kinds {
			if ctx.Err() != nil || (round > 0 && time.Now().After(deadline)) {
				break
			}
			f := in.inject(ctx, k)
			fmt.Fprintf(cfg.Log, "  %6.1fs  %-28s %-40s %s\n", f.At.Seconds(), f.Kind, f.Target, f.Detail)
			faults = append(faults, f)
			sleep(ctx, jitter(in.r, cfg.FaultEvery))
		}
	}
	return faults
}

// finalSpecs gives every live resource a new valid spec and makes sure each
// deleted one is deleted, retrying through API errors.
func finalSpecs(ctx context.Context, w *workload, r *rand.Rand, maxCM int) error {
	for _, s := range w.slots {
		err := kubeops.WaitFor(ctx, 2*time.Minute, "final spec of "+s.key.String(), func(ctx context.Context) (bool, error) {
			var err error
			if s.live {
				if err = w.patch(ctx, s, w.next(r, maxCM), "final update"); err != nil && isNotFound(err) {
					err = w.create(ctx, s, w.next(r, maxCM))
				}
			} else {
				err = w.remove(ctx, s)
			}
			return err == nil, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// converge checks until nothing is wrong or the timeout passes, and returns
// what is still wrong.
func converge(ctx context.Context, cfg Config, v *verifier) ([]Problem, error) {
	return until(ctx, cfg.ConvergeTimeout, v.check)
}

// until calls check every 2 s until it finds no problem or timeout passes,
// and returns the problems it found last.
func until(ctx context.Context, timeout time.Duration, check func(context.Context) ([]Problem, error)) ([]Problem, error) {
	deadline := time.Now().Add(timeout)
	var last []Problem
	for {
		ps, err := check(ctx)
		if err == nil {
			if len(ps) == 0 {
				return nil, nil
			}
			last = ps
		}
		if time.Now().After(deadline) {
			if last == nil && err != nil {
				return nil, fmt.Errorf("checking: %w", err)
			}
			return last, nil
		}
		if !sleep(ctx, 2*time.Second) {
			return last, ctx.Err()
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

func summarize(ps []Problem) string {
	var b strings.Builder
	for i, p := range ps {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(ps)-5)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s: %s", p.Subject, p.What)
	}
	return b.String()
}
