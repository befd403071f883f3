package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/chartkeeper/chartkeeper/test/framework/childproc"
	"github.com/chartkeeper/chartkeeper/test/framework/freeport"
)

// idleSettle passes, unmeasured, between the install and the idle phase.
const idleSettle = 10 * time.Second

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// stopGrace is how long an operator may take to stop after SIGTERM.
const stopGrace = 30 * time.Second

// phase builds a timed phase over the subject's keys.
func (r *runner) phase(s Subject, name string, keys []key, act func(context.Context) error, ms ...milestoneCheck) phaseRun {
	return phaseRun{name: name, keys: keys, act: act, milestones: ms, timeout: r.cfg.PhaseTimeout, log: r.cfg.Log, label: s.Name}
}

func (r *runner) deployed(version int) milestoneCheck {
	return milestoneCheck{MilestoneDeployed, func(k key) bool { return r.obs.deployedVersion(k) >= version }}
}

func (r *runner) ready(message string) milestoneCheck {
	return milestoneCheck{MilestoneReady, func(k key) bool { return r.obs.ready(k, message) }}
}

func (r *runner) gone() milestoneCheck {
	return milestoneCheck{MilestoneGone, r.obs.gone}
}

// create creates k's custom resource with the scenario's first spec.
func (r *runner) create(ctx context.Context, k key) error {
	return r.crs.create(ctx, k, r.cfg.scenario.spec(messageV1))
}

// upgrade patches k's custom resource to the scenario's second message.
func (r *runner) upgrade(ctx context.Context, k key) error {
	return r.crs.patchSpec(ctx, k, r.cfg.scenario.patch(messageV2))
}

// each runs fn for every key from the harness's writers.
func each(keys []key, fn func(context.Context, key) error) func(context.Context) error {
	return func(ctx context.Context) error { return forEach(ctx, keys, writers, fn) }
}

// measure runs a phase and adds what it cost: the subject's API requests,
// for a process its CPU time, and the CPU time of the control plane's
// processes (cp; none when the run did not start the cluster); and the
// watches the API server cut off meanwhile, whoever's they were.
// metricsURL, when set, is the operator's metrics endpoint: its own count
// of requests by verb and resource is kept too.
func measure(ctx context.Context, p phaseRun, op *childproc.Process, cp controlPlane, counter requestCounter, metricsURL string) (Phase, error) {
	reqs0, err := counter.read(ctx)
	if err != nil {
		return Phase{Name: p.name}, err
	}
	var byKind0 map[string]float64
	if metricsURL != "" {
		if byKind0, err = operatorRequests(ctx, metricsURL); err != nil {
			return Phase{Name: p.name}, err
		}
	}
	var u0 usage
	if op != nil {
		if u0, err = procUsage(op.PID()); err != nil {
			return Phase{Name: p.name}, err
		}
	}
	// The control plane is read last before the phase and first after it,
	// so that the requests reading the API server's metrics fall outside.
	cp0 := cp.sample()
	ph, runErr := p.run(ctx)
	if sum, by, ok := controlPlaneCPU(cp0, cp.sample()); ok {
		ph.ControlPlaneCPUSeconds, ph.ControlPlaneCPUByComponent = &sum, by
	}
	reqs1, err := counter.read(context.WithoutCancel(ctx))
	if err != nil {
		return ph, err
	}
	ph.APIRequests = reqs1.requests - reqs0.requests
	ph.WatchesCutOff = reqs1.cutOff - reqs0.cutOff
	if metricsURL != "" {
		byKind1, err := operatorRequests(context.WithoutCancel(ctx), metricsURL)
		if err != nil {
			return ph, err
		}
		ph.RequestsByKind = subtract(byKind1, byKind0)
	}
	if op != nil {
		if u1, err := procUsage(op.PID()); err == nil {
			cpu := u1.CPUSeconds - u0.CPUSeconds
			ph.CPUSeconds = &cpu
		}
	}
	return ph, runErr
}

func (r *runner) runOperator(ctx context.Context, s Subject, id identity, counter requestCounter, out *SubjectResult) error {
	vars := map[string]string{"kubeconfig": id.Kubeconfig, "watches": r.watches, "concurrency": strconv.Itoa(r.cfg.Concurrency), "pprof": "", "metrics": "0"}
	metricsURL := ""
	if slices.ContainsFunc(s.Command, func(w string) bool { return strings.Contains(w, "{metrics}") }) {
		addr, err := freeport.Addr()
		if err != nil {
			return err
		}
		vars["metrics"], metricsURL = addr, "http://"+addr+"/metrics"
	}
	profiling := r.cfg.ProfileDir != "" && slices.ContainsFunc(s.Command, func(w string) bool { return strings.Contains(w, "{pprof}") })
	if profiling {
		addr, err := freeport.Addr()
		if err != nil {
			return err
		}
		vars["pprof"] = addr
	}
	args := expand(s.Command, vars)
	logPath := filepath.Join(r.workDir, r.perRun(s.Name)+".log")
	fmt.Fprintf(r.cfg.Log, "  %-12s starting %s (log: %s)\n", s.Name, strings.Join(args, " "), logPath)
	op, err := childproc.Start(args, []string{"KUBECONFIG=" + id.Kubeconfig}, logPath)
	if err != nil {
		return err
	}
	defer func() {
		if u, err := procUsage(op.PID()); err == nil {
			out.CPUSeconds, out.PeakRSSBytes = &u.CPUSeconds, &u.PeakRSSBytes
		}
		if err := op.Stop(stopGrace); err != nil && out.Error == "" {
			out.Error = "stopping: " + err.Error()
		}
	}()
	alive := func() error {
		if err, done := op.Exited(); done {
			return fmt.Errorf("%s exited: %v (log: %s)", args[0], err, logPath)
		}
		return nil
	}
	// Warm up: one release through install and delete, untimed, so that
	// every operator is started and has its caches before the clock runs.
	warm := []key{{Namespace: r.warmupNamespace(s), Name: "warmup"}}
	for _, p := range []phaseRun{
		r.phase(s, "warmup", warm, each(warm, r.create), r.deployed(1)),
		r.phase(s, "cooldown", warm, each(warm, r.crs.delete), r.gone()),
	} {
		p.alive, p.timeout = alive, 3*time.Minute
		if _, err := p.run(ctx); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	keys := r.cfg.crKeys(s.Name)
	phases := []phaseRun{
		r.phase(s, PhaseInstall, keys, each(keys, r.create), r.deployed(1), r.ready(messageV1)),
		r.phase(s, PhaseIdle, nil, func(ctx context.Context) error { return sleep(ctx, r.cfg.Idle) }),
		r.phase(s, PhaseUpgrade, keys, each(keys, r.upgrade), r.deployed(2), r.ready(messageV2)),
		r.phase(s, PhaseDelete, keys, each(keys, r.crs.delete), r.gone()),
	}
	for _, p := range phases {
		if p.name == PhaseIdle && r.cfg.Idle < 0 {
			continue
		}
		p.alive = alive
		if p.name == PhaseIdle {
			p.timeout = r.cfg.Idle + time.Minute
			// An operator may still be reporting the install in its
			// status after every release is Ready: that is install work.
			if err := sleep(ctx, idleSettle); err != nil {
				return err
			}
		}
		var profiles []func() error
		if p.name == PhaseInstall || p.name == PhaseUpgrade || p.name == PhaseDelete {
			if profiling {
				profiles = append(profiles, r.profile(ctx, vars["pprof"], r.perRun(s.Name+"-"+p.name)),
					r.heapAt(ctx, vars["pprof"], r.perRun(s.Name+"-"+p.name+"-heap")))
			}
			profiles = append(profiles, r.profileAPIServer(ctx, r.perRun(s.Name+"-"+p.name)))
		}
		ph, err := measure(ctx, p, op, r.cfg.ControlPlane, counter, metricsURL)
		out.Phases = append(out.Phases, ph)
		r.waitProfiles(s.Name, profiles...)
		if profiling && metricsURL != "" && p.name != PhaseIdle {
			if err := r.saveMetrics(context.WithoutCancel(ctx), metricsURL, r.perRun(s.Name+"-"+p.name)); err != nil {
				fmt.Fprintf(r.cfg.Log, "  %-12s metrics: %v\n", s.Name, err)
			}
		}
		if err != nil {
			return err
		}
		if profiling && p.name == PhaseUpgrade {
			// The heap with every release installed and upgraded.
			if err := r.savePprof(ctx, "http://"+vars["pprof"]+"/debug/pprof/heap", r.perRun(s.Name+"-heap")); err != nil {
				fmt.Fprintf(r.cfg.Log, "  %-12s heap profile: %v\n", s.Name, err)
			}
		}
	}
	return nil
}

func (r *runner) runFloor(ctx context.Context, id identity, counter requestCounter, out *SubjectResult) error {
	s := Subject{Name: out.Name}
	keys := r.cfg.crKeys(s.Name)
	ch, err := loader.Load(r.cfg.Chart)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.cfg.Log, "  %-12s rendering %d releases before the clock starts\n", s.Name, len(keys))
	releases, err := renderReleases(ch, r.cfg.scenario, keys)
	if err != nil {
		return err
	}
	rc, err := clientcmd.BuildConfigFromFlags("", id.Kubeconfig)
	if err != nil {
		return err
	}
	rc.QPS, rc.Burst = 5000, 10000
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	mapper, err := newMapper(rc)
	if err != nil {
		return err
	}
	f := &floor{cs: cs, dyn: dyn, mapper: mapper, gvr: r.crs.GVR, releases: releases, workers: r.cfg.Concurrency}
	// Discovery happens once, before the clock, as an operator's would.
	objs, err := objects(releases[keys[0]][0])
	if err != nil {
		return err
	}
	for _, u := range objs {
		if _, err := f.resource(u); err != nil {
			return err
		}
	}
	phases := []phaseRun{
		r.phase(s, PhaseInstall, keys, func(ctx context.Context) error {
			return f.pipeline(ctx, keys, r.create, f.install)
		}, r.deployed(1), r.ready(messageV1)),
		r.phase(s, PhaseUpgrade, keys, func(ctx context.Context) error {
			return f.pipeline(ctx, keys, r.upgrade, f.upgrade)
		}, r.deployed(2), r.ready(messageV2)),
		r.phase(s, PhaseDelete, keys, func(ctx context.Context) error {
			return f.pipeline(ctx, keys, r.crs.delete, f.uninstall)
		}, r.gone()),
	}
	for _, p := range phases {
		var profile func() error
		if p.name == PhaseInstall || p.name == PhaseUpgrade {
			profile = r.profileAPIServer(ctx, r.perRun(s.Name+"-"+p.name))
		}
		ph, err := measure(ctx, p, nil, r.cfg.ControlPlane, counter, "")
		out.Phases = append(out.Phases, ph)
		r.waitProfiles(s.Name, profile)
		if err != nil {
			return err
		}
	}
	return nil
}

// freeLoopbackAddr returns a loopback address with a port free right now.
