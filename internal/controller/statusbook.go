package controller

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

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
// never late; only a message can be, by at most this long. What a message
// newly says about why Pods wait (a scheduler's refusal, an image that
// cannot be pulled: release.Result.Causes) is not held back: it is why the
// release waits, not how far it got (saysNewCause).
const statusDebounce = 30 * time.Second

// statusBook remembers, per custom resource (UID), when this process last
// wrote its status and what it wrote, until the cache shows that write,
// and the status its last step computed but did not write (held). A step
// must start from the status written last, not from an older copy the
// cache may still hold right after a write; once the cache holds the
// write, the cache's copy is that status, and the book keeps no copy of
// its own (at N=1,000 the two copies per resource were 2 to 3 MB in the
// heap profiles).
// A status is copied in and out, never changed in the book.
type statusBook struct {
	mu      sync.Mutex
	entries map[types.UID]*bookEntry
	clock   clock.PassiveClock
	// turns is the budget of rewordings (statusturns.go).
	turns *rate.Limiter
}

type bookEntry struct {
	// nn names the resource: a request for it that finds it gone forgets
	// the entry by name (forgetNamed).
	nn types.NamespacedName
	at time.Time // the last write here
	// rv is the resourceVersion that write returned (0: unknown); the
	// cache holds the write once it shows this version or a later one.
	rv uint64
	// seen is the newest resourceVersion the cache was seen to hold (a
	// write's watch event can come before the write is recorded here).
	seen uint64
	// written is the status as written, until the cache holds it.
	written *api.Status
	// held is a status computed but not written (nil: the one persisted).
	held *api.Status
	// turn is the turn a held rewording booked (statusturns.go).
	turn *rate.Reservation
}

func newStatusBook(clk clock.PassiveClock) *statusBook {
	return &statusBook{entries: map[types.UID]*bookEntry{}, clock: clk, turns: rate.NewLimiter(rewordingsPerSecond, rewordingBurst)}
}

// of returns the resource's status as last persisted (the cached one when
// this process wrote none, after a start or a leader change, or when the
// cache holds its last write), when it was written here (zero if not), and
// the status the next step starts from.
func (b *statusBook) of(obj *unstructured.Unstructured) (persisted api.Status, at time.Time, current api.Status, err error) {
	var written, held *api.Status
	b.mu.Lock()
	b.letGo(obj)
	if e := b.entries[obj.GetUID()]; e != nil {
		written, held, at = e.written, e.held, e.at
	}
	b.mu.Unlock()
	if written != nil {
		persisted = *written.DeepCopy()
	} else if persisted, err = api.StatusOf(obj); err != nil {
		persisted = api.Status{}
	}
	current = *persisted.DeepCopy()
	if held != nil {
		current = *held.DeepCopy()
	}
	return persisted, at, current, err
}

func (b *statusBook) entry(uid types.UID) *bookEntry {
	e := b.entries[uid]
	if e == nil {
		e = &bookEntry{}
		b.entries[uid] = e
	}
	return e
}

// shown records that the cache holds obj: a status written here that it
// holds is let go.
func (b *statusBook) shown(obj client.Object) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.letGo(obj)
}

// letGo notes the version the cache holds of obj and drops the written
// copy of obj's status if the cache holds it (with b.mu held).
func (b *statusBook) letGo(obj client.Object) {
	v, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return
	}
	e := b.entry(obj.GetUID())
	e.nn = types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	e.seen = max(e.seen, v)
	if e.rv != 0 && e.seen >= e.rv {
		e.written = nil
	}
}

// observer is the handler that tells the book what the cache holds (and
// what it no longer holds); it enqueues nothing.
func (b *statusBook) observer() handler.TypedEventHandler[client.Object, reconcile.Request] {
	return handler.Funcs{
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			b.shown(e.ObjectNew)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			b.forget(e.Object.GetUID())
		},
	}
}

// wrote records a status written at now; the write returned resourceVersion rv.
func (b *statusBook) wrote(uid types.UID, st api.Status, now time.Time, rv string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entry(uid)
	b.giveBack(e) // a change written; a rewording at its turn booked none left
	e.written, e.held, e.at = st.DeepCopy(), nil, now
	e.rv, _ = strconv.ParseUint(rv, 10, 64)
	if e.rv != 0 && e.seen >= e.rv {
		e.written = nil // the cache showed it already
	}
}

// hold records a status computed but not written yet.
func (b *statusBook) hold(uid types.UID, st api.Status) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.entry(uid).held = st.DeepCopy()
}

// settled records that the status computed is the one persisted: a held
// one is moot.
func (b *statusBook) settled(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.entries[uid]; e != nil {
		e.held = nil
		b.giveBack(e)
	}
}

func (b *statusBook) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.giveBack(b.entries[uid])
	delete(b.entries, uid)
}

// named records the name of uid's entry, if it has one.
func (b *statusBook) named(uid types.UID, nn types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.entries[uid]; e != nil {
		e.nn = nn
	}
}

// forgetNamed forgets the entries of the resource nn, whatever its UID:
// a request that finds the resource gone knows only its name. (An entry
// the cache's deletion event did not forget is one a step still running
// made after it.) It looks through every entry: resources go far less
// often than they are stepped.
func (b *statusBook) forgetNamed(nn types.NamespacedName) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for uid, e := range b.entries {
		if e.nn == nn {
			b.giveBack(e)
			delete(b.entries, uid)
		}
	}
}

// size counts the resources the book holds anything of.
func (b *statusBook) size() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.entries)
}

// copies counts the statuses the book holds (written or held).
func (b *statusBook) copies() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, e := range b.entries {
		if e.written != nil {
			n++
		}
		if e.held != nil {
			n++
		}
	}
	return n
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

// saysNewCause reports whether b's Ready message says one of causes (what
// the Pods of workloads not ready give as the reason: release.Result)
// that a's does not: why a release waits is news, written at once (within
// one readiness poll of the Pods saying it), not a rewording held back
// like a rollout's progress.
func saysNewCause(a, b api.Status, causes []string) bool {
	if len(causes) == 0 {
		return false
	}
	var was, is string
	if c := meta.FindStatusCondition(a.Conditions, api.ConditionReady); c != nil {
		was = c.Message
	}
	if c := meta.FindStatusCondition(b.Conditions, api.ConditionReady); c != nil {
		is = c.Message
	}
	for _, cause := range causes {
		if strings.Contains(is, cause) && !strings.Contains(was, cause) {
			return true
		}
	}
	return false
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
