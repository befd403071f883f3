package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

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
	}{
		{"reworded soon after a write waits", rolling, cond(metav1.ConditionFalse, "Progressing", "not ready: Available: 0/1"), at, at.Add(500 * time.Millisecond), statusDebounce - 500*time.Millisecond},
		{"reworded after the wait is written", rolling, cond(metav1.ConditionFalse, "Progressing", "other words"), at, at.Add(statusDebounce + time.Second), 0},
		{"a new condition status is written at once", rolling, cond(metav1.ConditionTrue, "Succeeded", "all ready"), at, at.Add(100 * time.Millisecond), 0},
		{"a new reason is written at once", rolling, cond(metav1.ConditionFalse, "Backoff", "x"), at, at.Add(100 * time.Millisecond), 0},
		{"a new generation is written at once", rolling, func() api.Status { s := rolling.DeepCopy(); s.ObservedGeneration = 3; return *s }(), at, at.Add(100 * time.Millisecond), 0},
		{"not written here (cached status): written at once", rolling, cond(metav1.ConditionFalse, "Progressing", "other words"), time.Time{}, at, 0},
		{"an object's readiness alone waits", inventory(rolling, 2, api.ObjectNotReady), inventory(rolling, 2, api.ObjectReady), at, at.Add(time.Second), statusDebounce - time.Second},
		{"a first inventory waits", rolling, inventory(rolling, 2, api.ObjectNotReady), at, at.Add(time.Second), statusDebounce - time.Second},
		{"an inventory with a new reason is written at once", inventory(rolling, 2, api.ObjectNotReady), inventory(cond(metav1.ConditionTrue, "Succeeded", "all ready"), 2, api.ObjectReady), at, at.Add(time.Second), 0},
		{"a new attempt is written at once", rolling, history(rolling), at, at.Add(time.Second), 0},
	} {
		reworded := !c.at.IsZero() && rewordedOnly(c.persisted, c.st) // as the reconciler asks
		if got := holdBack(reworded, c.at, c.now); got != c.want {
			t.Errorf("%s: holdBack = %s, want %s", c.name, got, c.want)
		}
	}
}
