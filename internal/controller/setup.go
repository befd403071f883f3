package controller

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/intern"
	"github.com/chartkeeper/chartkeeper/internal/metrics"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/internal/readiness"
	"github.com/chartkeeper/chartkeeper/internal/release"
)

// Dependents is the label-scoped, metadata-only view of everything
// chartkeeper released (and its release Secrets), shared by all controllers.
type Dependents struct {
	cache.Cache
	mu       sync.Mutex
	handlers []*kindWatcher
}

// NewDependents creates the dependents cache and adds it to the manager.
// Objects of the kinds in whole are cached whole (managedFields aside):
// readiness expressions may read any of their fields.
func NewDependents(mgr manager.Manager, namespaces []string, whole []schema.GroupKind) (*Dependents, error) {
	sel, err := metav1.LabelSelectorAsSelector(&metav1.LabelSelector{MatchLabels: map[string]string{api.LabelManaged: "true"}})
	if err != nil {
		return nil, err
	}
	opts := cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient(),
		DefaultLabelSelector: sel,
		// Metadata without managedFields (often half of an object's
		// metadata): nothing reads them from this cache. Full objects
		// are read from it only for their readiness, and kept reduced to
		// what that needs.
		DefaultTransform: reducer(whole),
	}
	c, err := newCache(mgr, namespaces, opts)
	if err != nil {
		return nil, err
	}
	return &Dependents{Cache: c}, nil
}

// newCache creates a cache with opts over the watched namespaces (none:
// all) and adds it to the manager.
func newCache(mgr manager.Manager, namespaces []string, opts cache.Options) (cache.Cache, error) {
	if len(namespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range namespaces {
			opts.DefaultNamespaces[ns] = cache.Config{}
		}
	}
	c, err := cache.New(mgr.GetConfig(), opts)
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(c); err != nil {
		return nil, err
	}
	return c, nil
}

// reducer is the dependents cache's transform: metadata kept as
// dependentMeta, objects reduced to what kstatus reads but those of the
// kinds in whole, and their strings interned. A reduced object is kept as
// a cachedResource, its status and spec as JSON: decoded, a Deployment's
// conditions alone were maps of a few hundred bytes each, and the engine
// reads a reduced object only when its version changed (statusOf).
func reducer(whole []schema.GroupKind) func(o any) (any, error) {
	return func(o any) (any, error) {
		switch x := o.(type) {
		case *metav1.PartialObjectMetadata:
			return dependentMeta(x), nil
		case *unstructured.Unstructured:
			if !slices.Contains(whole, x.GroupVersionKind().GroupKind()) {
				return resourceTransform(readiness.Reduce(x)), nil
			}
		}
		return intern.Kept(o)
	}
}

// WatchKind makes every registered controller watch released objects of gvk.
func (d *Dependents) WatchKind(gvk schema.GroupVersionKind) error {
	d.mu.Lock()
	hs := append([]*kindWatcher(nil), d.handlers...)
	d.mu.Unlock()
	for _, h := range hs {
		if err := h.watch(gvk); err != nil {
			return err
		}
	}
	return nil
}

// kindWatcher registers watches of released kinds on one controller, once each.
type kindWatcher struct {
	ctrl    controller.Controller
	cache   cache.Cache
	handler handler.TypedEventHandler[*metav1.PartialObjectMetadata, reconcile.Request]
	mu      sync.Mutex
	seen    map[schema.GroupVersionKind]bool
}

func (k *kindWatcher) watch(gvk schema.GroupVersionKind) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.seen[gvk] {
		return nil
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	if err := k.ctrl.Watch(source.Kind(k.cache, obj, k.handler)); err != nil {
		return fmt.Errorf("watching %s: %w", gvk, err)
	}
	k.seen[gvk] = true
	return nil
}

// Setup creates the controller of one watch. sources, when the watch has
// valuesFrom, reconciles resources when the objects they take values
// from change (nil: only the resources' own changes do).
func Setup(mgr manager.Manager, deps *Dependents, sources *ValuesSources, engine *release.Engine, t release.Target, log logr.Logger) error {
	r, err := setup(mgr, deps, sources, engine, t, log)
	if err != nil {
		return err
	}
	metrics.TrackStores(r.tracked)
	return nil
}

// setup is Setup, returning the controller's Reconciler.
func setup(mgr manager.Manager, deps *Dependents, sources *ValuesSources, engine *release.Engine, t release.Target, log logr.Logger) (*Reconciler, error) {
	w := t.Watch
	gvk := w.GroupVersionKind()
	r := &Reconciler{client: mgr.GetClient(), engine: engine, target: t, log: log.WithValues("kind", gvk.Kind),
		statuses: newStatusBook(clock.RealClock{}), clock: clock.RealClock{}}
	c, err := controller.New("chartkeeper-"+gvk.Kind+"."+gvk.Group, mgr, controller.Options{
		Reconciler:              r,
		MaxConcurrentReconciles: w.Concurrency(),
		SkipNameValidation:      ptrTrue(),
	})
	if err != nil {
		return nil, err
	}
	// The cache holds the resources as cachedResource (CacheTransform), or
	// decoded when not told to: the watch takes either.
	cr := &unstructured.Unstructured{}
	cr.SetGroupVersionKind(gvk)
	selects := func(o client.Object) bool { return w.LabelSelector.Matches(labels.Set(o.GetLabels())) }
	selected := predicate.NewPredicateFuncs(selects)
	// A resource relabelled out of the selector (to another shard) is
	// reconciled once more, so that the reconciler lets go of it.
	selectedOrWas := predicate.Funcs{
		CreateFunc:  func(e event.CreateEvent) bool { return selects(e.Object) },
		UpdateFunc:  func(e event.UpdateEvent) bool { return selects(e.ObjectNew) || selects(e.ObjectOld) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return selects(e.Object) },
		GenericFunc: func(e event.GenericEvent) bool { return selects(e.Object) },
	}
	changed := predicate.Or[client.Object](
		predicate.GenerationChangedPredicate{},
		predicate.LabelChangedPredicate{},
		predicate.AnnotationChangedPredicate{},
	)
	if err := c.Watch(source.Kind[client.Object](mgr.GetCache(), cr, &handler.EnqueueRequestForObject{}, selectedOrWas, changed)); err != nil {
		return nil, err
	}
	// A status write enqueues nothing (changed), but once the cache holds
	// it the book lets go of its copy.
	if err := c.Watch(source.Kind[client.Object](mgr.GetCache(), cr, r.statuses.observer(), selected)); err != nil {
		return nil, err
	}

	// Release Secrets: an action by someone else (helm CLI) or a deletion
	// reaches the resource through the release index.
	secrets := &metav1.PartialObjectMetadata{}
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	toOwner := coalesce(func(_ context.Context, s *metav1.PartialObjectMetadata) []reconcile.Request {
		name, ok := helm.ReleaseOf(s.GetLabels())
		if !ok {
			return nil
		}
		if nn, ok := r.ownerOf(s.GetNamespace() + "/" + name); ok {
			return []reconcile.Request{{NamespacedName: nn}}
		}
		return nil
	})
	if err := c.Watch(source.Kind(deps.Cache, secrets, toOwner)); err != nil {
		return nil, err
	}

	if sources != nil && len(w.ValuesFrom) > 0 {
		if err := c.Watch(sources.For(gvk.GroupKind())); err != nil {
			return nil, err
		}
	}

	if w.WatchesDependents() {
		gk := gvk.GroupKind()
		kw := &kindWatcher{ctrl: c, cache: deps.Cache, seen: map[schema.GroupVersionKind]bool{},
			handler: coalesce(func(_ context.Context, o *metav1.PartialObjectMetadata) []reconcile.Request {
				ownerGK, nn, ok := ownership.ParseKey(o.GetAnnotations()[api.AnnotationOwner])
				if !ok || ownerGK != gk {
					return nil
				}
				return []reconcile.Request{{NamespacedName: nn}}
			})}
		deps.mu.Lock()
		deps.handlers = append(deps.handlers, kw)
		deps.mu.Unlock()
	}
	return r, nil
}

func ptrTrue() *bool { t := true; return &t }
