package controller

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A change of a released object waits behind a change of a custom
// resource made after it, and several changes of one make one request.
func TestDependentChangesQueueBehindResourceChanges(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("test")
	defer q.ShutDown()
	dep := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "released"}}
	own := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "changed"}}
	h := coalescing[*metav1.PartialObjectMetadata]{delay: 10 * time.Millisecond,
		toRequests: func(context.Context, *metav1.PartialObjectMetadata) []reconcile.Request {
			return []reconcile.Request{dep}
		}}
	obj := &metav1.PartialObjectMetadata{}
	for range 3 {
		h.Update(context.Background(), event.TypedUpdateEvent[*metav1.PartialObjectMetadata]{ObjectOld: obj, ObjectNew: obj}, q)
	}
	time.Sleep(50 * time.Millisecond) // the delay has passed: both are ready
	q.Add(own)

	first, p1, _ := q.GetWithPriority()
	q.Done(first)
	second, p2, _ := q.GetWithPriority()
	q.Done(second)
	if first != own || p1 != 0 {
		t.Errorf("first %v at priority %d, want the resource's own change at 0", first, p1)
	}
	if second != dep || p2 != dependentPriority {
		t.Errorf("second %v at priority %d, want the dependent change at %d", second, p2, dependentPriority)
	}
	if n := q.Len(); n != 0 {
		t.Errorf("%d more requests queued, want the dependent changes coalesced into one", n)
	}
}
