package controller

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/chartkeeper/chartkeeper/internal/metrics"
	"github.com/chartkeeper/chartkeeper/internal/release"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// ValuesSources is the release engine's view of the ConfigMaps and
// Secrets custom resources take values from (valuesFrom): exactly those
// objects are watched, each by its own watch (field selector on its
// name), started when the first resource names it and stopped when the
// last one stops; no cache holds other ConfigMaps or Secrets. A change of
// one reconciles the resources that name it, through the controller of
// their kind (For).
type ValuesSources struct {
	client kubernetes.Interface
	log    logr.Logger
	// ctx is the watches' parent, cancelled when the manager stops.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	refs    sourceRefs
	watches map[watches.SourceObject]*objectWatch
	queues  map[schema.GroupKind]workqueue.TypedRateLimitingInterface[reconcile.Request]
}

var _ release.ValuesSources = (*ValuesSources)(nil)

// NewValuesSources returns the valuesFrom watches of the operator and adds
// them to the manager (they stop with it).
func NewValuesSources(mgr manager.Manager, cs kubernetes.Interface, log logr.Logger) (*ValuesSources, error) {
	v := newValuesSources(cs, log)
	if err := mgr.Add(v); err != nil {
		v.cancel()
		return nil, err
	}
	v.report()
	return v, nil
}

func newValuesSources(cs kubernetes.Interface, log logr.Logger) *ValuesSources {
	ctx, cancel := context.WithCancel(context.Background())
	return &ValuesSources{client: cs, log: log, ctx: ctx, cancel: cancel, refs: newSourceRefs(),
		watches: map[watches.SourceObject]*objectWatch{},
		queues:  map[schema.GroupKind]workqueue.TypedRateLimitingInterface[reconcile.Request]{}}
}

// Start waits for the manager to stop, then stops every watch.
func (v *ValuesSources) Start(ctx context.Context) error {
	<-ctx.Done()
	v.cancel()
	return nil
}

// NeedLeaderElection: watches start only when a reconcile names an
// object, which only the leader does.
func (v *ValuesSources) NeedLeaderElection() bool { return false }

// For is the source through which the controller of kind gk hears of
// changes of the objects its resources take values from.
func (v *ValuesSources) For(gk schema.GroupKind) source.Source { return sourcesOf{v: v, gk: gk} }

// sourcesOf is the source For returns.
type sourcesOf struct {
	v  *ValuesSources
	gk schema.GroupKind
}

func (s sourcesOf) Start(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	s.v.mu.Lock()
	defer s.v.mu.Unlock()
	s.v.queues[s.gk] = q
	return nil
}

func (s sourcesOf) String() string { return "valuesFrom ConfigMaps and Secrets of " + s.gk.String() }

// Use records the objects resource takes values from now, starting the
// watches of objects nobody used and stopping those nobody uses any more.
func (v *ValuesSources) Use(resource release.Resource, objs []watches.SourceObject) {
	v.mu.Lock()
	defer v.mu.Unlock()
	added, dropped := v.refs.set(resource, objs)
	for _, o := range added {
		v.watches[o] = startObjectWatch(v.ctx, v.client, o, v.changed, v.log)
	}
	for _, o := range dropped {
		v.watches[o].stop()
		delete(v.watches, o)
	}
	if len(added)+len(dropped) > 0 {
		v.report()
	}
}

// report sets the metric of the objects watched, per kind (v.mu held).
func (v *ValuesSources) report() {
	n := map[watches.SourceKind]int{}
	for o := range v.watches {
		n[o.Kind]++
	}
	for _, k := range []watches.SourceKind{watches.SourceConfigMap, watches.SourceSecret} {
		metrics.SetSourcesWatched(string(k), n[k])
	}
}

// Read returns obj's data from its watch (Use it first).
func (v *ValuesSources) Read(ctx context.Context, obj watches.SourceObject) (map[string][]byte, bool, error) {
	v.mu.Lock()
	w := v.watches[obj]
	v.mu.Unlock()
	if w == nil {
		return nil, false, fmt.Errorf("%s is not watched: no resource uses it", obj)
	}
	return w.read(ctx)
}

// changed reconciles the resources that take values from obj.
func (v *ValuesSources) changed(obj watches.SourceObject) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, r := range v.refs.users(obj) {
		if q := v.queues[r.GroupKind]; q != nil {
			q.Add(reconcile.Request{NamespacedName: r.NamespacedName})
		}
	}
}
