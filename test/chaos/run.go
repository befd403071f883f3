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
	kinds := chaosKinds[:cfg.Kinds]
	watchesPath, err := writeWatches(cfg.WorkDir, cfg.Chart, kinds)
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	if err := setUp(ctx, admin, cs, watchesPath, namespaces); err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	if err := setUpCredentials(ctx, cs, watchesPath, namespaces); err != nil { // secrets.go
		return nil, fmt.Errorf("chaos: %w", err)
	}
	fmt.Fprintf(cfg.Log, "chaos: seed %d, %d custom resources of %d kinds in %d namespaces, faults for %s (at least %d kills, at most %s; operator log: %s)\n",
		cfg.Seed, cfg.CRs, cfg.Kinds, cfg.Namespaces, cfg.Duration, cfg.MinKills, cfg.MaxDuration, filepath.Join(cfg.WorkDir, "operator.log"))

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

	w := newWorkload(dyn, namespaces, cfg.CRs, kinds)
	kt := newKeptTracker(cs, namespaces)
	ktCtx, stopKept := context.WithCancel(ctx)
	var ktDone sync.WaitGroup
	ktDone.Go(func() { kt.run(ktCtx, 2*time.Second) })
	defer func() { stopKept(); ktDone.Wait() }()
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
	rep := &Report{Seed: cfg.Seed, CRs: cfg.CRs, Namespaces: cfg.Namespaces, Kinds: cfg.Kinds, MinKills: cfg.MinKills}
	for _, k := range kinds {
		rep.KindNames = append(rep.KindNames, k.gvk.Kind)
	}
	began := time.Now()
	rep.Faults = shake(ctx, cfg, cs, w, op)
	rep.FaultSeconds = time.Since(began).Seconds()
	lastFault := time.Now()
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}

	// Settle: the operator runs; what the faults left must settle with no
	// spec changed, then every resource gets its final spec.
	if err := op.ready(ctx, 3*time.Minute); err != nil {
		return rep, fmt.Errorf("chaos: after the faults: %w", err)
	}
	v := &verifier{cs: cs, w: w, namespaces: namespaces, maxHistory: maxHistory, kept: kt}
	fmt.Fprintf(cfg.Log, "chaos: faults over (%d kills); waiting for what they left to settle\n", rep.Kills())
	unsettled, lastChange, err := settle(ctx, w, v, cfg.ConvergeTimeout)
	rep.SettleSeconds = time.Since(lastFault).Seconds()
	rep.Unsettled = len(unsettled) > 0
	rep.UnsettledSubjects = subjects(unsettled)
	rep.SettledOthersSeconds = lastChange.Sub(lastFault).Seconds()
	fmt.Fprintf(cfg.Log, "chaos: settled %.1fs after the last fault (%d subjects left, all others settled by %.1fs)\n",
		rep.SettleSeconds, rep.UnsettledSubjects, rep.SettledOthersSeconds)
	if err != nil {
		return rep, fmt.Errorf("chaos: settling: %w", err)
	}
	// A spec that cannot be released must end in a settled failure that
	// says why, not in a pending release or a silent one.
	failing, err := failOnPurpose(ctx, w, r, cfg.MaxConfigMaps)
	if err != nil {
		return rep, fmt.Errorf("chaos: failing specs: %w", err)
	}
	fmt.Fprintf(cfg.Log, "chaos: %d specs that cannot be released; waiting for each to settle, explained\n", len(failing))
	unexplained, err := waitExplained(ctx, v, failing, cfg.ConvergeTimeout)
	if err != nil {
		return rep, fmt.Errorf("chaos: %w", err)
	}
	rep.Failed, rep.Explained = len(failing), len(failing)-subjects(unexplained)
	if err := finalSpecs(ctx, w, r, cfg.MaxConfigMaps); err != nil {
		return rep, fmt.Errorf("chaos: final specs: %w", err)
	}
	fmt.Fprintf(cfg.Log, "chaos: final specs written; waiting for convergence\n")
	began = time.Now()
	problems, err := converge(ctx, cfg, v)
	rep.ConvergeSeconds = time.Since(began).Seconds()
	rep.Problems = append(append(unsettled, unexplained...), problems...)
	if err == nil { // no secret value in what the operator wrote (secrets.go)
		rep.Problems = append(rep.Problems, checkSecrets(ctx, cfg.Log, cs, dyn, filepath.Join(cfg.WorkDir, "operator.log"), namespaces, kinds)...)
	}
	rep.KeptObjects = kt.count()
	rep.fill(w, op)
	if err != nil {
		return rep, fmt.Errorf("chaos: %w", err)
	}
	if rep.Lost > 0 {
		return rep, fmt.Errorf("chaos: %d lost (seed %d): %s", rep.Lost, cfg.Seed, summarize(rep.Problems))
	}
	if k := rep.Kills(); k < cfg.MinKills {
		return rep, fmt.Errorf("chaos: only %d operator kills in %s, %d wanted (seed %d)", k, cfg.MaxDuration, cfg.MinKills, cfg.Seed)
	}
	return rep, nil
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
	deadline, hardStop := in.started.Add(cfg.Duration), in.started.Add(cfg.MaxDuration)
	var faults []Fault
	kills := 0
	// More rounds while the time or the kills are short, never past hardStop.
	more := func() bool {
		now := time.Now()
		return now.Before(hardStop) && (now.Before(deadline) || kills < cfg.MinKills)
	}
	for round := 0; ctx.Err() == nil && (round == 0 || more()); round++ {
		kinds := in.round()
		in.r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
		for _, k := range kinds {
			if ctx.Err() != nil || (round > 0 && !more()) {
				break
			}
			for _, f := range in.inject(ctx, k) {
				fmt.Fprintf(cfg.Log, "  %6.1fs  %-34s %-44s %s\n", f.At.Seconds(), f.Kind, f.Target, f.Detail)
				faults = append(faults, f)
				if f.Injected && isKill(f.Kind) {
					kills++
				}
			}
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
