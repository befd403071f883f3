package controller

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// unschedulable is a reason Pods give (release.Result.Causes).
const unschedulable = "Pod web-1: PodScheduled=False: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu."

func TestHoldBack(t *testing.T) {
	at := time.Unix(1000, 0)
	cond := func(status metav1.ConditionStatus, reason, msg string) api.Status {
		return api.Status{ObservedGeneration: 2, Conditions: []metav1.Condition{{Type: api.ConditionReady, Status: status, Reason: reason, Message: msg}}}
	}
	rolling := cond(metav1.ConditionFalse, "Progressing", "not ready: Deployment web: InProgress: Updated: 0/1")
	inventory := func(st api.Status, revision int, state api.ObjectState) api.Status {
		out := st.DeepCopy()
		out.Inventory = &api.Inventory{Revision: revision, Total: 1, Entries: []api.InventoryEntry{{Kind: "Deployment", Name: "web", State: state}}}
		return *out
	}
	history := func(st api.Status) api.Status {
		out := st.DeepCopy()
		out.History = append(out.History, api.Attempt{Action: "Upgrade", Result: api.AttemptSucceeded})
		return *out
	}
	for _, c := range []struct {
		name      string
		persisted api.Status
		st        api.Status
		at, now   time.Time
		want      time.Duration
		causes    []string // release.Result.Causes
	}{
		{"reworded soon after a write waits", rolling, cond(metav1.ConditionFalse, "Progressing", "not ready: Available: 0/1"), at, at.Add(500 * time.Millisecond), statusDebounce - 500*time.Millisecond, nil},
		{"reworded after the wait is written", rolling, cond(metav1.ConditionFalse, "Progressing", "other words"), at, at.Add(statusDebounce + time.Second), 0, nil},
		{"a new condition status is written at once", rolling, cond(metav1.ConditionTrue, "Succeeded", "all ready"), at, at.Add(100 * time.Millisecond), 0, nil},
		{"a new reason is written at once", rolling, cond(metav1.ConditionFalse, "Backoff", "x"), at, at.Add(100 * time.Millisecond), 0, nil},
		{"a new generation is written at once", rolling, func() api.Status { s := rolling.DeepCopy(); s.ObservedGeneration = 3; return *s }(), at, at.Add(100 * time.Millisecond), 0, nil},
		{"not written here (cached status): written at once", rolling, cond(metav1.ConditionFalse, "Progressing", "other words"), time.Time{}, at, 0, nil},
		{"an object's readiness alone waits", inventory(rolling, 2, api.ObjectNotReady), inventory(rolling, 2, api.ObjectReady), at, at.Add(time.Second), statusDebounce - time.Second, nil},
		{"a first inventory waits", rolling, inventory(rolling, 2, api.ObjectNotReady), at, at.Add(time.Second), statusDebounce - time.Second, nil},
		{"an inventory with a new reason is written at once", inventory(rolling, 2, api.ObjectNotReady), inventory(cond(metav1.ConditionTrue, "Succeeded", "all ready"), 2, api.ObjectReady), at, at.Add(time.Second), 0, nil},
		{"a new attempt is written at once", rolling, history(rolling), at, at.Add(time.Second), 0, nil},
		{"why Pods wait, newly said, is written at once", rolling, cond(metav1.ConditionFalse, "Progressing", "not ready: Deployment web: InProgress: Updated: 0/1 ("+unschedulable+")"),
			at, at.Add(time.Second), 0, []string{unschedulable}},
		{"why Pods wait, said already, waits with the rest of a rewording",
			cond(metav1.ConditionFalse, "Progressing", "not ready: Deployment web: InProgress: Updated: 0/1 ("+unschedulable+")"),
			cond(metav1.ConditionFalse, "Progressing", "not ready: Deployment web: InProgress: Available: 0/1 ("+unschedulable+")"),
			at, at.Add(time.Second), statusDebounce - time.Second, []string{unschedulable}},
		{"a cause the new message does not say (cut off) is no news", rolling, cond(metav1.ConditionFalse, "Progressing", "other words"),
			at, at.Add(time.Second), statusDebounce - time.Second, []string{unschedulable}},
	} {
		reworded := !c.at.IsZero() && rewordedOnly(c.persisted, c.st) && !saysNewCause(c.persisted, c.st, c.causes) // as the reconciler asks
		if got := holdBack(reworded, c.at, c.now); got != c.want {
			t.Errorf("%s: holdBack = %s, want %s", c.name, got, c.want)
		}
	}
}

// TestBookLetsGoWhenTheCacheShowsTheWrite: the observer's update events
// free the written copy once the cache holds that write, in either order
// (the write's watch event may come before the write is recorded), and
// its delete events forget the resource.
func TestBookLetsGoWhenTheCacheShowsTheWrite(t *testing.T) {
	st := api.Status{ObservedGeneration: 2, Conditions: []metav1.Condition{{Type: api.ConditionReady, Status: metav1.ConditionTrue, Reason: "Succeeded"}}}
	at := func(rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetUID("u1")
		u.SetResourceVersion(rv)
		return u
	}
	update := func(b *statusBook, rv string) {
		b.observer().Update(context.Background(), event.UpdateEvent{ObjectOld: at("1"), ObjectNew: at(rv)}, nil)
	}
	for _, c := range []struct {
		name       string
		run        func(b *statusBook)
		wantCopies int
	}{
		{"written, cache older", func(b *statusBook) { b.wrote("u1", st, time.Now(), "10"); update(b, "9") }, 1},
		{"written, cache shows it", func(b *statusBook) { b.wrote("u1", st, time.Now(), "10"); update(b, "10") }, 0},
		{"written, cache shows a later one", func(b *statusBook) { b.wrote("u1", st, time.Now(), "10"); update(b, "12") }, 0},
		{"cache shows it before the write is recorded", func(b *statusBook) { update(b, "10"); b.wrote("u1", st, time.Now(), "10") }, 0},
		{"unknown version written", func(b *statusBook) { b.wrote("u1", st, time.Now(), ""); update(b, "10") }, 1},
		{"held stays until settled", func(b *statusBook) { b.hold("u1", st); update(b, "10") }, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newStatusBook(clock.RealClock{})
			c.run(b)
			if got := b.copies(); got != c.wantCopies {
				t.Errorf("copies = %d, want %d", got, c.wantCopies)
			}
			b.observer().Delete(context.Background(), event.DeleteEvent{Object: at("11")}, nil)
			if got := b.size(); got != 0 {
				t.Errorf("after the delete event the book holds %d resources, want 0", got)
			}
		})
	}
}
