package devcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Config says where a cluster lives and how it is shaped.
type Config struct {
	// Dir is the state directory (required). It is created if missing.
	Dir string
	// BinDir holds etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler and kwok (required).
	BinDir string
	// KwokStages is kwok's stage configuration. Default: BinDir/kwok-stages.yaml.
	// The cluster adds its own stages to it (kwok-stages.yaml in this
	// package: hook Pods run to completion).
	KwokStages string
	// Nodes is the number of kwok fake nodes. Default 3.
	Nodes int
	// PodsPerNode is each fake node's pod capacity. Default 1000.
	PodsPerNode int
	// Ports pins component ports; 0 picks a free port. Only used when the
	// cluster is created: a cluster keeps its ports for its lifetime.
	Ports Ports
	// Attached ties the processes to the calling process: they are killed if
	// it dies (for tests). Otherwise they outlive it until Down.
	Attached bool
	// StartTimeout bounds the wait for each component. Default 2 minutes.
	StartTimeout time.Duration
	// Log receives progress lines. Default: discarded.
	Log io.Writer
	// Profiling makes the API server serve /debug/pprof (to cluster
	// admins), so a benchmark can see where the control plane's CPU goes.
	Profiling bool
}

func (cfg Config) withDefaults() (Config, error) {
	if cfg.Dir == "" || cfg.BinDir == "" {
		return cfg, errors.New("devcluster: Dir and BinDir must be set")
	}
	var err error
	if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		return cfg, err
	}
	if cfg.BinDir, err = filepath.Abs(cfg.BinDir); err != nil {
		return cfg, err
	}
	if cfg.KwokStages == "" {
		cfg.KwokStages = filepath.Join(cfg.BinDir, "kwok-stages.yaml")
	}
	if cfg.Nodes == 0 {
		cfg.Nodes = 3
	}
	if cfg.PodsPerNode == 0 {
		cfg.PodsPerNode = 1000
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 2 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	if cfg.Nodes < 1 || cfg.PodsPerNode < 1 {
		return cfg, fmt.Errorf("devcluster: Nodes (%d) and PodsPerNode (%d) must be at least 1", cfg.Nodes, cfg.PodsPerNode)
	}
	for _, c := range components {
		if _, err := os.Stat(filepath.Join(cfg.BinDir, c.binary)); err != nil {
			return cfg, fmt.Errorf("devcluster: %s not found in %s: build the tools first (make tools)", c.binary, cfg.BinDir)
		}
	}
	if _, err := os.Stat(cfg.KwokStages); err != nil {
		return cfg, fmt.Errorf("devcluster: kwok stages %s not found: build the tools first (make tools)", cfg.KwokStages)
	}
	return cfg, nil
}

// Cluster is a running local control plane.
type Cluster struct {
	cfg   Config
	pki   pki
	state State
}

// Kubeconfig returns the path of the admin kubeconfig (system:masters).
func (c *Cluster) Kubeconfig() string { return c.path("admin.kubeconfig") }

// RESTConfig returns an admin client configuration.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", c.Kubeconfig())
}

// State returns the recorded ports and processes.
func (c *Cluster) State() State { return c.state }

// Up starts the cluster in cfg.Dir, or reuses it when it already runs:
// components that are alive and healthy are kept, dead ones are restarted
// with the same ports and data. It returns once every node is Ready and the
// controllers work. On failure it stops whatever it started itself and the
// error carries the end of the failing component's log.
func Up(ctx context.Context, cfg Config) (*Cluster, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "logs"), 0o755); err != nil {
		return nil, err
	}
	unlock, err := lockDir(cfg.Dir)
	if err != nil {
		return nil, err
	}
	defer unlock()

	st, existed, err := loadState(cfg.Dir)
	if err != nil {
		return nil, err
	}
	if !existed {
		st.Ports = cfg.Ports
		if err := st.Ports.fillFree(); err != nil {
			return nil, err
		}
	}
	c := &Cluster{cfg: cfg, pki: pki{dir: cfg.Dir}, state: st}
	if err := c.pki.generate(net.ParseIP("10.96.0.1")); err != nil {
		return nil, fmt.Errorf("generating PKI: %w", err)
	}
	if err := c.writeKubeconfigs(); err != nil {
		return nil, fmt.Errorf("writing kubeconfigs: %w", err)
	}
	if err := c.writeStages(); err != nil {
		return nil, fmt.Errorf("writing kwok stages: %w", err)
	}
	if err := c.state.save(cfg.Dir); err != nil {
		return nil, err
	}

	var started []string
	fail := func(name string, err error) (*Cluster, error) {
		for i := len(started) - 1; i >= 0; i-- {
			_ = c.state.Procs[started[i]].Stop(10 * time.Second)
			delete(c.state.Procs, started[i])
		}
		_ = c.state.save(cfg.Dir)
		if name != "" {
			err = fmt.Errorf("%s: %w\n--- last lines of %s ---\n%s", name, err, c.logPath(name), tail(c.logPath(name), 25))
		}
		return nil, err
	}
	for _, comp := range components {
		begin := time.Now()
		h := comp.health(c)
		if c.state.Procs[comp.name].Alive() {
			if err := poll(ctx, cfg.StartTimeout, waitInterval, func(ctx context.Context) error { return c.probe(ctx, h) }); err != nil {
				return fail(comp.name, fmt.Errorf("running (pid %d) but unhealthy: %w", c.state.Procs[comp.name].PID, err))
			}
			fmt.Fprintf(cfg.Log, "  %-24s running (pid %d), reused\n", comp.name, c.state.Procs[comp.name].PID)
			continue
		}
		proc, err := startProcess(filepath.Join(cfg.BinDir, comp.binary), comp.args(c), c.logPath(comp.name), cfg.Attached)
		if err != nil {
			return fail(comp.name, err)
		}
		c.state.Procs[comp.name] = proc
		started = append(started, comp.name)
		if err := c.state.save(cfg.Dir); err != nil {
			return fail("", err)
		}
		err = poll(ctx, cfg.StartTimeout, waitInterval, func(ctx context.Context) error {
			if !proc.Alive() {
				return backoffStop{errors.New("process exited")}
			}
			return c.probe(ctx, h)
		})
		if err != nil {
			return fail(comp.name, err)
		}
		fmt.Fprintf(cfg.Log, "  %-24s started (pid %d) in %.1fs\n", comp.name, proc.PID, time.Since(begin).Seconds())
	}

	begin := time.Now()
	rc, err := c.RESTConfig()
	if err != nil {
		return fail("", err)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return fail("", err)
	}
	if err := poll(ctx, cfg.StartTimeout, waitInterval, func(ctx context.Context) error { return c.ensureObjects(ctx, cs) }); err != nil {
		return fail("kube-apiserver", err)
	}
	if err := poll(ctx, cfg.StartTimeout, waitInterval, func(ctx context.Context) error { return c.controllersWork(ctx, cs) }); err != nil {
		return fail("kube-controller-manager", err)
	}
	c.state.Nodes = cfg.Nodes
	if err := c.state.save(cfg.Dir); err != nil {
		return fail("", err)
	}
	fmt.Fprintf(cfg.Log, "  %-24s %d Ready, controllers working, in %.1fs\n", "nodes", cfg.Nodes, time.Since(begin).Seconds())
	return c, nil
}

// backoffStop marks an error that retrying cannot fix.
type backoffStop struct{ error }

// Down stops exactly the processes recorded in dir's state.json, in reverse
// start order, and keeps the PKI and data for the next Up. A directory with
// no state is not an error.
func Down(dir string, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return err
	}
	defer unlock()
	st, existed, err := loadState(dir)
	if err != nil || !existed {
		return err
	}
	var errs []error
	for i := len(components) - 1; i >= 0; i-- {
		name := components[i].name
		p, ok := st.Procs[name]
		if !ok {
			continue
		}
		if p.Alive() {
			if err := p.Stop(15 * time.Second); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", name, err))
				continue
			}
			fmt.Fprintf(log, "  %-24s stopped (pid %d)\n", name, p.PID)
		}
		delete(st.Procs, name)
	}
	if err := st.save(dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Purge stops the cluster and removes its state directory.
func Purge(dir string, log io.Writer) error {
	if err := Down(dir, log); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

func (c *Cluster) logPath(name string) string { return c.path("logs", name+".log") }

// lockDir takes an exclusive lock on dir so that two Up/Down calls never
// interleave; the returned function releases it.
func lockDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
