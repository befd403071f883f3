package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/chartkeeper/chartkeeper/test/framework/kubeops"
)

// runner holds what every subject's run shares.
type runner struct {
	cfg     Config
	admin   *rest.Config
	cs      kubernetes.Interface
	crs     crs
	obs     *observer
	watches string
	workDir string
	// run is the run being measured, from 1 (Config.Repeat).
	run int
}

// Run measures every subject of cfg in turn, the whole measurement
// Config.Repeat times, and writes result.json, table.txt and
// convergence.png to cfg.OutDir. A subject that fails (its
// process exits, a phase times out) is recorded with its error and the run
// goes on with the next; the error returned is about the run itself.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	workDir := filepath.Join(cfg.OutDir, "work")
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		return nil, err
	}
	c, err := kubeops.Connect(cfg.Kubeconfig, 1000, 0)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	admin, cs, dyn := c.Config, c.Typed, c.Dynamic
	sc := cfg.scenario
	watchesPath, w, err := writeWatches(workDir, cfg.Chart, sc.gvk(), cfg.Concurrency)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	crd, err := benchCRD(w)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	if err := kubeops.InstallCRD(ctx, admin, crd); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	gvr := schema.GroupVersionResource{Group: benchGroup, Version: benchVersion, Resource: crd.Spec.Names.Plural}
	mapper, err := newMapper(admin)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	released, err := releasedResources(w.Chart, sc, mapper)
	if err != nil {
		return nil, fmt.Errorf("bench: chart %s: %w", cfg.Chart, err)
	}
	obs, err := newObserver(ctx, admin, cs, gvr, sc.Selector, released)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer obs.close()
	r := &runner{
		cfg: cfg, admin: admin, cs: cs, obs: obs, watches: watchesPath, workDir: workDir,
		crs: crs{kubeops.CustomResources{Dynamic: dyn, GVR: gvr, GVK: sc.gvk()}},
	}
	res := &Result{
		Started: time.Now().UTC(), Machine: cfg.Machine, Scenario: sc.Name, N: cfg.N, Concurrency: cfg.Concurrency,
		Namespaces: cfg.namespaceCount(), IdleSeconds: max(cfg.Idle, 0).Seconds(), Repeat: cfg.Repeat, CPUs: runtime.NumCPU(),
	}
	fmt.Fprintf(cfg.Log, "bench: %d custom resources (%s: %s) in %d namespaces, concurrency %d, subjects:",
		cfg.N, sc.Name, sc.About, res.Namespaces, cfg.Concurrency)
	for _, s := range cfg.Subjects {
		fmt.Fprintf(cfg.Log, " %s", s.Name)
	}
	fmt.Fprintln(cfg.Log)
	for r.run = 1; r.run <= cfg.Repeat && ctx.Err() == nil; r.run++ {
		if cfg.Repeat > 1 {
			fmt.Fprintf(cfg.Log, "bench: run %d of %d\n", r.run, cfg.Repeat)
		}
		for _, s := range cfg.Subjects {
			if ctx.Err() != nil {
				break
			}
			sr := r.subject(ctx, s)
			if sr.Error != "" {
				fmt.Fprintf(cfg.Log, "  %-12s error: %s\n", s.Name, sr.Error)
			}
			res.Subjects = append(res.Subjects, sr)
			if err := res.write(cfg.OutDir); err != nil { // keep what was measured so far
				return res, err
			}
		}
	}
	return res, ctx.Err()
}

// perRun names a file of the current run: name itself when the
// measurement runs once, name-run<i> otherwise.
func (r *runner) perRun(name string) string {
	if r.cfg.Repeat == 1 {
		return name
	}
	return fmt.Sprintf("%s-run%d", name, r.run)
}

// subject measures one subject and cleans up after it.
func (r *runner) subject(ctx context.Context, s Subject) SubjectResult {
	out := SubjectResult{Name: s.Name, Run: r.run, Command: s.Command}
	nss := r.cfg.namespaces(s.Name)
	defer func() {
		// Not timed: leave the cluster as the next subject expects it. A
		// subject that stopped early leaves custom resources whose
		// finalizers nobody will remove any more.
		all := append(nss, r.warmupNamespace(s))
		bg := context.WithoutCancel(ctx)
		if err := r.crs.dropFinalizers(bg, all); err != nil && out.Error == "" {
			out.Error = "cleaning up: " + err.Error()
		}
		if err := kubeops.DeleteNamespaces(bg, r.cs, all, 10*time.Minute); err != nil && out.Error == "" {
			out.Error = "cleaning up: " + err.Error()
		}
	}()
	id, err := newIdentity(ctx, r.cs, r.admin, s.Name, r.workDir)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	if err := kubeops.CreateNamespaces(ctx, r.cs, append(nss, r.warmupNamespace(s))); err != nil {
		out.Error = err.Error()
		return out
	}
	counter := requestCounter{cs: r.cs, flowSchema: id.FlowSchema}
	if s.Floor() {
		err = r.runFloor(ctx, id, counter, &out)
	} else {
		err = r.runOperator(ctx, s, id, counter, &out)
	}
	if err != nil {
		out.Error = err.Error()
	}
	return out
}

func (r *runner) warmupNamespace(s Subject) string { return "bench-" + s.Name + "-warmup" }

// newMapper maps the chart's kinds to resources through discovery.
func newMapper(cfg *rest.Config) (*restmapper.DeferredDiscoveryRESTMapper, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery())), nil
}

// write saves result.json (with its summary), table.txt and convergence.png.
func (res *Result) write(dir string) error {
	res.Summary = res.summarize()
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "result.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "table.txt"), []byte(res.Table()+res.Breakdown()), 0o644); err != nil {
		return err
	}
	return res.Plot(filepath.Join(dir, "convergence.png"))
}
