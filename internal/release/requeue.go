package release

import (
	"time"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// afterActionRequeue is how soon a step follows an action: the next step
// observes its result (and waits for the cache to show it).
const afterActionRequeue = 200 * time.Millisecond

// deleteRequeue is how often an uninstall waits for objects to go.
const deleteRequeue = 2 * time.Second

// unwatchedPoll is how often an unready release is looked at when its
// objects are not watched (watchDependentResources: false).
const unwatchedPoll = 10 * time.Second

// requeue is the engine's requeue policy, applied to what a step asks for:
// an unready release whose objects are not watched is polled, and a watch's
// reconcilePeriod caps every wait (0: none).
func requeue(res Result, w watches.Watch) time.Duration {
	after := res.Requeue
	if res.Decision.State == StateUnready && !w.WatchesDependents() && (after == 0 || after > unwatchedPoll) {
		after = unwatchedPoll
	}
	if p := w.Period(); p > 0 && (after == 0 || after > p) {
		after = p
	}
	return after
}
