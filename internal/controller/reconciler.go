package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/release"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// Reconciler reconciles the custom resources of one watch.
type Reconciler struct {
	client client.Client // the manager's cached client
	engine *release.Engine
	target release.Target
	log    logr.Logger
	// releases maps release keys to their custom resources, for events on
	// release Secrets.
	releases sync.Map // "<ns>/<release>" -> types.NamespacedName
	// statuses holds the statuses this process wrote and computed (the
	// status carries the remediation bookkeeping; a step must not start
	// from an older copy the cache may still hold right after a write).
	statuses *statusBook
	clock    clock.PassiveClock
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(r.target.Watch.GroupVersionKind())
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.gone(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if msg, bad := obj.Object[cacheDecodeError]; bad {
		return ctrl.Result{}, fmt.Errorf("reading %s from the cache: %v", req.NamespacedName, msg)
	}
	// Requests come from released objects and release Secrets too, whatever
	// the resource's labels: a resource the watch's selector does not select
	// belongs to another operator (a shard), even while being deleted.
	// A resource relabelled out of the selector reaches here too (setup's
	// selected passes an update of a selected resource): this controller
	// lets go of it.
	if sel := r.target.Watch.LabelSelector; sel != nil && !sel.Matches(labels.Set(obj.GetLabels())) {
		r.gone(req.NamespacedName)
		r.statuses.forget(obj.GetUID())
		return ctrl.Result{}, nil
	}
	deleting := obj.GetDeletionTimestamp() != nil
	if deleting && !controllerutil.ContainsFinalizer(obj, api.Finalizer) && len(predecessorFinalizers(obj)) == 0 {
		return ctrl.Result{}, nil
	}
	// A predecessor's finalizer serves as chartkeeper's (predecessors.go):
	// none is added beside it, so a switch back leaves nothing behind.
	if !deleting && !controllerutil.ContainsFinalizer(obj, api.Finalizer) && len(predecessorFinalizers(obj)) == 0 {
		if err := r.patchFinalizer(ctx, obj, true); err != nil {
			return ctrl.Result{}, err
		}
	}

	w, st, err := r.beginStatus(req.NamespacedName, obj)
	if err != nil {
		return ctrl.Result{}, err
	}
	// goes: the resource is deleted with chartkeeper's finalizer, the
	// only one left, so a status written now would be read by nobody.
	goes := false
	var res release.Result
	defer func() {
		if !goes {
			w.finish(ctx, st, res.Causes, &result, &retErr)
		}
	}()

	res, err = r.engine.Step(ctx, r.target, obj, &st)
	ref, rerr := r.target.Watch.Release(obj.GetName(), obj.GetNamespace())
	if rerr == nil {
		r.index(ref, req.NamespacedName, res.Decision.Reason != api.ReasonReleaseOwnedByAnother)
	}
	// The release of a deleted resource is uninstalled: next it goes.
	goes = deleting && onlyReleaseFinalizers(obj, true) && res.Ran == release.ActionUninstall && res.ActionErr == nil && err == nil
	switch {
	case errors.Is(err, release.ErrCacheStale):
		return ctrl.Result{RequeueAfter: release.CacheStaleRequeue}, nil
	case err != nil:
		return ctrl.Result{}, err // transient: the work queue backs off
	}
	if res.Finished {
		r.releases.Delete(ref.Namespace + "/" + ref.Name)
		r.statuses.forget(obj.GetUID())
		// The predecessors' finalizers go too once the release is
		// uninstalled (or was never there), never while it is another's
		// or left alone as forged.
		drop := []string{api.Finalizer}
		uninstalled := res.Decision.Reason != api.ReasonReleaseOwnedByAnother && res.Decision.Reason != api.ReasonReleaseForged
		if uninstalled {
			drop = append(drop, predecessorFinalizers(obj)...)
		}
		goes = deleting && onlyReleaseFinalizers(obj, uninstalled)
		return ctrl.Result{}, r.removeFinalizers(ctx, obj, drop...)
	}
	return ctrl.Result{RequeueAfter: res.Requeue}, nil
}

// patchFinalizer adds or removes chartkeeper's finalizer with an
// optimistic-lock patch, so other finalizers are never lost.
func (r *Reconciler) patchFinalizer(ctx context.Context, obj *unstructured.Unstructured, add bool) error {
	before := obj.DeepCopy()
	if add {
		controllerutil.AddFinalizer(obj, api.Finalizer)
	} else {
		controllerutil.RemoveFinalizer(obj, api.Finalizer)
	}
	if err := r.client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		if !add && apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("updating finalizers: %w", err)
	}
	return nil
}

// removeFinalizers removes the named finalizers obj carries with an
// optimistic-lock patch (nothing is sent when it carries none of them).
func (r *Reconciler) removeFinalizers(ctx context.Context, obj *unstructured.Unstructured, names ...string) error {
	before := obj.DeepCopy()
	changed := false
	for _, n := range names {
		changed = controllerutil.RemoveFinalizer(obj, n) || changed
	}
	if !changed {
		return nil
	}
	if err := r.client.Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("updating finalizers: %w", err)
	}
	return nil
}

// gone forgets what is remembered of a resource this controller no
// longer serves, whichever way it went (deleted, its finalizer removed by
// hand, relabelled out of the selector): the engine's memory of it (the
// valuesFrom objects watched for it, its place among the remediations in
// flight, its state in chartkeeper_releases) and of its release when the
// release was its own (the release index says so: another resource's,
// whose release this one was refused, keeps its), and its status book.
func (r *Reconciler) gone(nn types.NamespacedName) {
	r.engine.ForgetResource(release.Resource{GroupKind: r.target.Watch.GroupVersionKind().GroupKind(), NamespacedName: nn})
	r.statuses.forgetNamed(nn)
	ref, err := r.target.Watch.Release(nn.Name, nn.Namespace)
	if err != nil {
		return
	}
	key := ref.Namespace + "/" + ref.Name
	if owner, ok := r.ownerOf(key); ok && owner == nn {
		r.releases.Delete(key)
		r.engine.Forget(ref)
	}
}

// index records that resource nn's release is ref when its own is true,
// and that it is not (another resource's, refused) otherwise.
func (r *Reconciler) index(ref watches.ReleaseRef, nn types.NamespacedName, own bool) {
	key := ref.Namespace + "/" + ref.Name
	if own {
		r.releases.Store(key, nn)
		return
	}
	r.releases.CompareAndDelete(key, nn)
}

// ownerOf maps a release key to its custom resource, if known.
func (r *Reconciler) ownerOf(releaseKey string) (types.NamespacedName, bool) {
	v, ok := r.releases.Load(releaseKey)
	if !ok {
		return types.NamespacedName{}, false
	}
	return v.(types.NamespacedName), true
}
