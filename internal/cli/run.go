package cli

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/chartkeeper/chartkeeper/internal/apps"
	"github.com/chartkeeper/chartkeeper/internal/hooks"
	"github.com/chartkeeper/chartkeeper/internal/hooks/builtin"
	"github.com/chartkeeper/chartkeeper/internal/metrics"
	"github.com/chartkeeper/chartkeeper/internal/operator"
	"github.com/chartkeeper/chartkeeper/internal/version"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// runFlags are the flags of "chartkeeper run".
type runFlags struct {
	watchesFile string
	kubeconfig  string
	metricsAddr string
	metrics     metricsFlags
	probeAddr   string
	pprofAddr   string
	leader      operator.LeaderElection
	qps         float64
	burst       int
	memory      memoryLimit
	images      imageFlags
	zap         zap.Options
	// signingKey: "namespace/name" of the release signing key's Secret.
	signingKey string
	// predecessor: helm-operator-plugins' and operator-sdk's own flags.
	predecessor predecessorFlags
}

func (f *runFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.watchesFile, "watches-file", envOr("WATCHES_FILE", "watches.yaml"), "path of watches.yaml (env WATCHES_FILE)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster config, then ~/.kube/config)")
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", "127.0.0.1:8080", `metrics endpoint address ("0" disables it)`)
	f.metrics.bind(fs)
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", "127.0.0.1:8081", "address of /healthz and /readyz")
	fs.StringVar(&f.pprofAddr, "pprof-bind-address", "", `address serving /debug/pprof/ profiles, e.g. 127.0.0.1:6060 (default "": off)`)
	fs.BoolVar(&f.leader.Enabled, "leader-elect", false, "elect a leader so that only one replica reconciles")
	fs.StringVar(&f.leader.ID, "leader-election-id", operator.DefaultLeaderElectionID, "name of the leader election Lease")
	fs.StringVar(&f.leader.Namespace, "leader-election-namespace", "", "namespace of the leader election Lease (default: the operator's own)")
	d := operator.DefaultLeaseTiming
	fs.DurationVar(&f.leader.Timing.LeaseDuration, "leader-elect-lease-duration", d.LeaseDuration, "how long a standby waits after the leader stopped renewing before it takes over")
	fs.DurationVar(&f.leader.Timing.RenewDeadline, "leader-elect-renew-deadline", d.RenewDeadline, "how long the leader tries to renew before it stops leading (and exits)")
	fs.DurationVar(&f.leader.Timing.RetryPeriod, "leader-elect-retry-period", d.RetryPeriod, "how often the leader renews and standbys try to acquire")
	fs.Float64Var(&f.qps, "kube-api-qps", 500, "steady requests per second to the API server, for the whole process")
	fs.IntVar(&f.burst, "kube-api-burst", 1000, "request burst to the API server, for the whole process")
	fs.StringVar(&f.signingKey, "release-signing-key", "", `Secret ("namespace/name", or "name" in the operator's namespace) holding the key that signs stored release revisions; created with a random key if absent (default: `+operator.SigningKeySecret+` in the operator's namespace)`)
	f.memory.bind(fs)
	f.images.bind(fs)
	apps.BindFlags(fs)
	f.zap = zap.Options{Development: false}
	f.zap.BindFlags(fs)
	f.predecessor.bind(fs, f)
}

func runCommand(args []string, stdout, stderr io.Writer) int {
	var f runFlags
	fs := apps.NewFlagSet("run", stderr)
	f.bind(fs)
	if code, ok := apps.ParseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "chartkeeper run: unexpected arguments %q\n", fs.Args())
		return ExitConfig
	}
	ws, err := watches.Load(f.watchesFile)
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper: invalid watches file %s:\n%s\n", f.watchesFile, indent(err.Error()))
		return ExitConfig
	}
	if err := f.predecessor.apply(ws); err != nil {
		fmt.Fprintf(stderr, "chartkeeper run: %v\n", err)
		return ExitConfig
	}
	if err := f.images.apply(ws); err != nil {
		fmt.Fprintf(stderr, "chartkeeper run: %v\n", err)
		return ExitConfig
	}
	if err := f.memory.validate(); err != nil {
		fmt.Fprintf(stderr, "chartkeeper run: %v\n", err)
		return ExitConfig
	}
	f.zap.DestWriter = stderr
	log := zap.New(zap.UseFlagOptions(&f.zap))
	ctrl.SetLogger(log)
	log.Info("starting chartkeeper", "version", version.String(), "watchesFile", f.watchesFile, "watches", len(ws))
	for _, w := range watches.Collisions(ws) {
		log.Info("warning: release names can collide", "watchesFile", f.watchesFile, "warning", w)
	}

	metricsOpts, err := f.metrics.options()
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper run: %v\n", err)
		return ExitConfig
	}
	cfg, err := restConfig(f.kubeconfig)
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper: no Kubernetes configuration: %v\n", err)
		return ExitConfig
	}
	if f.qps <= 0 || f.burst < 1 {
		fmt.Fprintf(stderr, "chartkeeper: --kube-api-qps must be positive and --kube-api-burst at least 1, got %g and %d\n", f.qps, f.burst)
		return ExitConfig
	}
	cfg.QPS, cfg.Burst = float32(f.qps), f.burst
	// One limiter for every client made from cfg (the manager's, Helm's
	// release storage and its per-action kube clients), so that the flags
	// bound the process. A limiter per client let Helm's actions go
	// unbounded while the storage client queued at its own limit (make bench).
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	cfg.Wrap(metrics.CountRequests)
	keyRef, err := signingKeyRef(f.signingKey, f.kubeconfig)
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper run: %v\n", err)
		return ExitConfig
	}
	reg, err := newRegistry(ws)
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper: %v\n", err)
		return ExitConfig
	}
	op, err := operator.New(cfg, ws, append([]operator.Option{
		operator.WithLogger(log),
		operator.WithMetricsAddress(f.metricsAddr),
		operator.WithProbeAddress(f.probeAddr),
		operator.WithPprofAddress(f.pprofAddr),
		operator.WithLeaderElection(f.leader.Enabled, f.leader.ID, f.leader.Namespace),
		operator.WithLeaseTiming(f.leader.Timing),
		operator.WithNamespaces(watchNamespaces()...),
		operator.WithHooks(reg),
		operator.WithSigningKey(keyRef),
	}, metricsOpts...)...)
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper: %v\n", err)
		return ExitConfig
	}
	ctx := ctrl.SetupSignalHandler()
	if limit, err := f.memory.apply(ctx, memlimit.FromCgroup, log.WithName("memlimit")); err != nil {
		log.Info("warning: no soft memory limit set", "error", err.Error())
	} else if limit != math.MaxInt64 {
		log.Info("soft memory limit", "GOMEMLIMIT", limit)
	}
	if err := op.Run(ctx); err != nil {
		log.Error(err, "operator stopped with an error")
		return ExitFailure
	}
	log.Info("chartkeeper stopped")
	return ExitOK
}

// restConfig loads the client configuration from an explicit kubeconfig
// file, or from $KUBECONFIG, the in-cluster environment or ~/.kube/config.
func restConfig(path string) (*rest.Config, error) {
	if path != "" {
		return clientcmd.BuildConfigFromFlags("", path)
	}
	return ctrl.GetConfig()
}

// watchNamespaces reads WATCH_NAMESPACE: a comma-separated list, empty for all.
func watchNamespaces() []string {
	var out []string
	for _, ns := range strings.Split(os.Getenv("WATCH_NAMESPACE"), ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// newRegistry attaches each watch's built-in hooks (watches.yaml), then the
// bundled apps' Go hooks of the watched kinds (configured by their flags,
// bound with apps.BindFlags).
func newRegistry(ws []watches.Watch) (*hooks.Registry, error) {
	reg := hooks.NewRegistry()
	kinds := map[schema.GroupKind]bool{}
	for _, w := range ws {
		gk := w.GroupVersionKind().GroupKind()
		kinds[gk] = true
		if err := reg.Add(gk, builtin.FromWatch(w)...); err != nil {
			return nil, fmt.Errorf("hooks of %s: %w", w, err)
		}
	}
	if err := apps.AddHooks(reg, func(gk schema.GroupKind) bool { return kinds[gk] }); err != nil {
		return nil, fmt.Errorf("registering hooks: %w", err)
	}
	return reg, nil
}
