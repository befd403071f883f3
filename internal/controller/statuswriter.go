package controller

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/metrics"
)

// statusWriter is the status write of one reconcile, as cluster-api's
// patch helper: begun with the status as this process last wrote it (the
// statusBook's copy when the cache may still hold an older one), finished
// once the step is done with the status the step computed. finish writes
// it as one merge patch of the status subresource, or nothing when it did
// not change; a change of wording only may be held back (statusturns.go).
type statusWriter struct {
	r   *Reconciler
	key types.NamespacedName
	uid types.UID
	// before is the resource with the persisted status: the patch's base.
	before    *unstructured.Unstructured
	persisted api.Status
	writtenAt time.Time
}

// beginStatus starts the status write of a reconcile of obj and returns
// the status the step starts from.
func (r *Reconciler) beginStatus(key types.NamespacedName, obj *unstructured.Unstructured) (*statusWriter, api.Status, error) {
	persisted, writtenAt, st, err := r.statuses.of(obj)
	if err != nil {
		r.log.Info("replacing an unreadable status", "resource", key, "error", err.Error())
	}
	// The merge patch is computed from the status as written.
	before := obj.DeepCopy()
	if err := api.SetStatus(before, persisted); err != nil {
		return nil, api.Status{}, err
	}
	return &statusWriter{r: r, key: key, uid: obj.GetUID(), before: before, persisted: persisted, writtenAt: writtenAt}, st, nil
}

// finish writes st (causes: what the step's Pods said, which makes a
// rewording news). A write held back shortens result's requeue; a failed
// write becomes the reconcile's error unless it has one.
func (w *statusWriter) finish(ctx context.Context, st api.Status, causes []string, result *ctrl.Result, retErr *error) {
	r, uid := w.r, w.uid
	if equality.Semantic.DeepEqual(w.persisted, st) {
		r.statuses.settled(uid) // a held rewording is moot now
		return
	}
	now := r.clock.Now()
	reworded := !w.writtenAt.IsZero() && rewordedOnly(w.persisted, st) && !saysNewCause(w.persisted, st, causes)
	wait := holdBack(reworded, w.writtenAt, now)
	if wait == 0 && reworded {
		wait = r.statuses.turn(uid) // statusturns.go
	}
	if wait > 0 && *retErr == nil {
		r.statuses.hold(uid, st)
		r.statuses.named(uid, w.key) // should it go meanwhile
		if result.RequeueAfter == 0 || wait < result.RequeueAfter {
			result.RequeueAfter = wait
		}
		return
	}
	rv, gone, err := r.patchStatus(ctx, w.before, st)
	if err != nil {
		if *retErr == nil {
			*retErr = err
		}
		return
	}
	if rv == "" && gone {
		r.statuses.forget(uid) // deleted meanwhile: nothing to remember
		return
	}
	r.statuses.wrote(uid, st, now, rv)
	change := metrics.StatusChanged
	if reworded {
		change = metrics.StatusReworded
	}
	metrics.ObserveStatusWrite(r.target.Watch.Kind, readyReason(st), change)
}

// patchStatus writes st as the status subresource with a merge patch
// against the object as it was read, and returns the resourceVersion the
// write made, or gone if the resource is.
func (r *Reconciler) patchStatus(ctx context.Context, before *unstructured.Unstructured, st api.Status) (rv string, gone bool, err error) {
	after := before.DeepCopy()
	if err := api.SetStatus(after, st); err != nil {
		return "", false, err
	}
	if err := r.client.Status().Patch(ctx, after, client.MergeFrom(before)); err != nil {
		if apierrors.IsNotFound(err) {
			return "", true, nil
		}
		return "", false, fmt.Errorf("patching status: %w", err)
	}
	return after.GetResourceVersion(), false, nil
}
