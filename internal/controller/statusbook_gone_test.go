package controller

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// TestBookForgetsAResourceGoneByName: a request that finds a resource
// gone knows only its name; the book forgets what it holds of it by that
// name, whatever was recorded after the cache's delete event (a step
// still running when the resource went), and keeps the others'.
func TestBookForgetsAResourceGoneByName(t *testing.T) {
	st := api.Status{Conditions: []metav1.Condition{{Type: api.ConditionReady, Status: metav1.ConditionFalse, Reason: "Progressing"}}}
	seen := func(uid, name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetUID(types.UID(uid))
		u.SetNamespace("team-a")
		u.SetName(name)
		u.SetResourceVersion("5")
		return u
	}
	gone := types.NamespacedName{Namespace: "team-a", Name: "web"}
	for _, c := range []struct {
		name string
		run  func(b *statusBook)
	}{
		{"read, then written", func(b *statusBook) {
			_, _, _, _ = b.of(seen("u1", "web"))
			b.wrote("u1", st, time.Now(), "9")
		}},
		{"read, then held", func(b *statusBook) {
			_, _, _, _ = b.of(seen("u1", "web"))
			b.hold("u1", st)
		}},
		{"held after the delete event", func(b *statusBook) {
			_, _, _, _ = b.of(seen("u1", "web"))
			b.observer().Delete(context.Background(), event.DeleteEvent{Object: seen("u1", "web")}, nil)
			b.hold("u1", st)
			b.named("u1", gone)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newStatusBook(clock.RealClock{})
			_, _, _, _ = b.of(seen("u2", "db"))
			c.run(b)
			b.forgetNamed(gone)
			if got := b.size(); got != 1 {
				t.Errorf("the book holds %d resources, want 1 (the other one)", got)
			}
			if e := b.entries["u2"]; e == nil {
				t.Error("the other resource was forgotten")
			}
		})
	}
}
