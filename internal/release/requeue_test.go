package release

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

func TestRequeuePolicy(t *testing.T) {
	watched := watches.Watch{}
	unwatched := watches.Watch{WatchDependentResources: new(bool)}
	periodic := watches.Watch{ReconcilePeriod: &metav1.Duration{Duration: time.Minute}}
	for _, tc := range []struct {
		name  string
		state State
		asked time.Duration
		w     watches.Watch
		want  time.Duration
	}{
		{"as asked", StateUnready, 4 * time.Minute, watched, 4 * time.Minute},
		{"only on change", StateInSync, 0, watched, 0},
		{"unready and unwatched is polled", StateUnready, 0, unwatched, unwatchedPoll},
		{"a shorter wait stands", StateUnready, time.Second, unwatched, time.Second},
		{"in sync and unwatched is not polled", StateInSync, 0, unwatched, 0},
		{"the reconcile period caps every wait", StateInSync, 0, periodic, time.Minute},
		{"a shorter wait under the period stands", StateOutOfSync, afterActionRequeue, periodic, afterActionRequeue},
	} {
		res := Result{Decision: Decision{State: tc.state}, Requeue: tc.asked}
		if got := requeue(res, tc.w); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
