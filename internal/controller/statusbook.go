package controller

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// statusDebounce is how long after a status write a new status that only
// rewords its conditions (same types, statuses, reasons, the rest equal)
// waits before it is written. While a Deployment rolls out, kstatus'
// message changes with each of its controller's writes ("Updated: 0/1",
// "Available: 0/1"), and each change was a status write of the custom
// resource, where the floor writes none. At 10 s, make bench at N=1,000
// (rollouts there take tens of seconds while a thousand run at once) still
// wrote 3.1 statuses per upgrade. The newest wording is written when the
// wait is over, or with the next change that is more than wording,
// whichever comes first: Ready, its reason, the observed generation are
// never late; only a message can be, by at most this long.
const statusDebounce = 30 * time.Second

// statusBook remembers, per custom resource (UID), the status this process
// last wrote (persisted, and when) and the status its last step computed
// (current: what the next step starts from; the cache may still hold an
// older copy right after a write). A status is copied in and out, never
// changed in the book, so one written status serves as both.
type statusBook struct {
	mu        sync.Mutex
	persisted map[types.UID]stamped
	current   map[types.UID]api.Status
}

type stamped struct {
	st api.Status
	at time.Time
}

func newStatusBook() *statusBook {
	return &statusBook{persisted: map[types.UID]stamped{}, current: map[types.UID]api.Status{}}
}

// of returns the resource's status as last persisted (the cached one when
// this process wrote none: after a start or a leader change), when it was
// written here (zero if not), and the status the next step starts from.
func (b *statusBook) of(obj *unstructured.Unstructured) (persisted api.Status, at time.Time, current api.Status, err error) {
	b.mu.Lock()
	p, wrote := b.persisted[obj.GetUID()]
	c, computed := b.current[obj.GetUID()]
	b.mu.Unlock()
	if wrote {
		persisted, at = *p.st.DeepCopy(), p.at
	} else if persisted, err = api.StatusOf(obj); err != nil {
		persisted = api.Status{}
	}
	current = *persisted.DeepCopy()
	if computed {
		current = *c.DeepCopy()
	}
	return persisted, at, current, err
}

// wrote records a status written at now.
func (b *statusBook) wrote(uid types.UID, st api.Status, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	kept := *st.DeepCopy()
	b.persisted[uid] = stamped{st: kept, at: now}
	b.current[uid] = kept
}

// held records a status computed but not written yet.
func (b *statusBook) held(uid types.UID, st api.Status) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.current[uid] = *st.DeepCopy()
}

func (b *statusBook) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.persisted, uid)
	delete(b.current, uid)
}

// rewordedOnly reports whether b differs from a only in the messages of
// its conditions and in status.inventory: the readiness of each released
// object moves with each step of a rollout as the messages do, and is
// written with them (docs/status-history.md).
func rewordedOnly(a, b api.Status) bool {
	if len(a.Conditions) != len(b.Conditions) {
		return false
	}
	a, b = *a.DeepCopy(), *b.DeepCopy()
	for i := range a.Conditions {
		a.Conditions[i].Message, b.Conditions[i].Message = "", ""
	}
	a.Inventory, b.Inventory = nil, nil
	return equality.Semantic.DeepEqual(a, b)
}

// holdBack returns how long a status must wait before it is written (0:
// write it now): a rewording (rewordedOnly of the one this process wrote
// at at) waits out statusDebounce from at.
func holdBack(reworded bool, at, now time.Time) time.Duration {
	if !reworded {
		return 0
	}
	if left := statusDebounce - now.Sub(at); left > 0 {
		return left
	}
	return 0
}

// readyReason is the reason of st's Ready condition ("" without one).
func readyReason(st api.Status) string {
	if c := meta.FindStatusCondition(st.Conditions, api.ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}
