package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/go-logr/logr"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/chartkeeper/chartkeeper/internal/controller"
	"github.com/chartkeeper/chartkeeper/internal/intern"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// Operator is a configured, not yet running, chartkeeper manager.
type Operator struct {
	mgr     manager.Manager
	watches []watches.Watch
	log     logr.Logger
	synced  atomic.Bool
}

// New validates the options and builds the manager. Its errors are
// configuration errors: nothing has been started.
func New(cfg *rest.Config, ws []watches.Watch, opts ...Option) (*Operator, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	if len(ws) == 0 {
		return nil, errors.New("no watches: nothing to reconcile")
	}
	mopts := ctrl.Options{
		Logger:                  o.logger,
		Metrics:                 o.metricsServer(),
		HealthProbeBindAddress:  o.probeAddr,
		PprofBindAddress:        o.pprofAddr,
		LeaderElection:          o.leader.Enabled,
		LeaderElectionID:        o.leader.ID,
		LeaderElectionNamespace: o.leader.Namespace,
		LeaseDuration:           &o.leader.Timing.LeaseDuration,
		RenewDeadline:           &o.leader.Timing.RenewDeadline,
		RetryPeriod:             &o.leader.Timing.RetryPeriod,
		// Stop leading at once on shutdown so a standby takes over quickly.
		LeaderElectionReleaseOnCancel: true,
		// Custom resources are unstructured: read them from the cache too.
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
	}
	// Custom resources are kept as JSON, decoded when read; anything else
	// without managedFields, its strings interned.
	mopts.Cache.DefaultTransform = controller.CacheTransform(ws, intern.Kept)
	if len(o.namespaces) > 0 {
		mopts.Cache.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range o.namespaces {
			mopts.Cache.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	mgr, err := ctrl.NewManager(cfg, mopts)
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	op := &Operator{mgr: mgr, watches: ws, log: o.logger}
	if err := op.setupControllers(cfg, o); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("caches", op.readyCheck); err != nil {
		return nil, err
	}
	if err := mgr.Add(&syncWatcher{op: op}); err != nil {
		return nil, err
	}
	if err := mgr.Add(&unwatchedReport{reader: mgr.GetAPIReader(), watches: ws, namespaces: o.namespaces,
		log: o.logger.WithName("unwatched")}); err != nil {
		return nil, err
	}
	return op, nil
}

// Run starts the manager and blocks until ctx ends or it fails.
func (op *Operator) Run(ctx context.Context) error {
	for _, w := range op.watches {
		op.log.Info("watching", "gvk", w.String(), "chart", w.Chart.Metadata.Name,
			"chartVersion", w.Chart.Metadata.Version, "maxConcurrentReconciles", w.Concurrency(),
			"reconcilePeriod", w.Period().String(), "watchDependentResources", w.WatchesDependents())
	}
	return op.mgr.Start(ctx)
}

// readyCheck fails until the manager's caches have synced.
func (op *Operator) readyCheck(_ *http.Request) error {
	if !op.synced.Load() {
		return errors.New("caches not synced yet")
	}
	return nil
}

// syncWatcher marks the operator ready once the caches have synced. It runs
// on every replica, leader or not.
type syncWatcher struct{ op *Operator }

func (s *syncWatcher) Start(ctx context.Context) error {
	if s.op.mgr.GetCache().WaitForCacheSync(ctx) {
		s.op.synced.Store(true)
	}
	<-ctx.Done()
	return nil
}

func (s *syncWatcher) NeedLeaderElection() bool { return false }
