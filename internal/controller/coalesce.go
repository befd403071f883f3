package controller

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// dependentDelay is how long a change of a released object or a release
// Secret waits before it reconciles its custom resource. Changes within it
// make one reconcile: a Deployment's rollout is four or five status
// writes by its controller, an action two or three writes of its release
// Secret, and each reconcile of them read the Deployment and wrote the
// custom resource's status again (make bench: 3 status patches and 3
// Deployment reads per upgrade). A hand edit is found, and the Ready
// condition set, at most this much later.
const dependentDelay = time.Second

// dependentPriority is the work-queue priority of those changes: below a
// change of a custom resource itself (priority 0), so that with many
// releases in motion the changes users asked for are acted on first, and
// the readiness of what was already released is looked at after them.
// Without it, each upgrade's four or five follow-ups (its Deployment
// rolling out, its release Secrets) queued ahead of upgrades not begun.
const dependentPriority = handler.LowPriority

// coalescing enqueues the requests a map function makes of an event after
// dependentDelay, at dependentPriority; a request already waiting is not
// added twice (nor lowered: the queue keeps the higher priority).
type coalescing[T any] struct {
	toRequests func(context.Context, T) []reconcile.Request
	delay      time.Duration
}

func coalesce[T any](f func(context.Context, T) []reconcile.Request) handler.TypedEventHandler[T, reconcile.Request] {
	return coalescing[T]{toRequests: f, delay: dependentDelay}
}

func (c coalescing[T]) add(ctx context.Context, obj T, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	pq, prioritized := q.(priorityqueue.PriorityQueue[reconcile.Request])
	for _, r := range c.toRequests(ctx, obj) {
		if prioritized {
			pq.AddWithOpts(priorityqueue.AddOpts{After: c.delay, Priority: ptr.To(dependentPriority)}, r)
			continue
		}
		q.AddAfter(r, c.delay)
	}
}

func (c coalescing[T]) Create(ctx context.Context, e event.TypedCreateEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	c.add(ctx, e.Object, q)
}

func (c coalescing[T]) Update(ctx context.Context, e event.TypedUpdateEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	c.add(ctx, e.ObjectOld, q)
	c.add(ctx, e.ObjectNew, q)
}

func (c coalescing[T]) Delete(ctx context.Context, e event.TypedDeleteEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	c.add(ctx, e.Object, q)
}

func (c coalescing[T]) Generic(ctx context.Context, e event.TypedGenericEvent[T], q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	c.add(ctx, e.Object, q)
}

var _ handler.TypedEventHandler[*metav1.PartialObjectMetadata, reconcile.Request] = coalescing[*metav1.PartialObjectMetadata]{}
