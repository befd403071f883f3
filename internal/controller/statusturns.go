package controller

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Rewordings take turns.
//
// A rewording (rewordedOnly: the same state in new words, or the
// inventory's readiness moving) waits out statusDebounce after the
// resource's last write (holdBack). That bounds the writes of one
// resource, not of many at once: in make bench's upgrade of 1,000
// releases, whose rollouts took one to two minutes while all of them ran,
// 1,360 rewordings were written besides the 2,000 changes of state, each
// a status patch that held a worker for a request's time on a saturated
// API server.
//
// So a rewording past its debounce also takes a turn from the
// controller's budget: rewordingsPerSecond, with up to rewordingBurst
// saved up. One that finds no turn free books the next and is held until
// then (asked again meanwhile, it keeps the turn it booked: turns go in
// the order booked); one whose turn would come later than turnHorizon
// books none, is held that long and asks again, so that no booking is
// far off (turns given back do not bring later ones forward). A change of
// state never waits for a turn, and gives back the one its resource
// booked, as does a rewording that became moot or a resource that went.
// With a few releases in motion nothing changes; with hundreds, their
// progress messages are written in turn, and the end of each wait (Ready,
// or a failure) at once.
const (
	rewordingsPerSecond = 2
	rewordingBurst      = 10
	turnHorizon         = time.Minute
)

// turn returns how long uid's rewording waits for its turn; 0: the turn is
// now, and spent.
func (b *statusBook) turn(uid types.UID) time.Duration {
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entry(uid)
	if e.turn == nil {
		r := b.turns.ReserveN(now, 1)
		if r.DelayFrom(now) > turnHorizon { // (never, for a budget without a burst)
			r.CancelAt(now) // the last booked: its turn is whole again
			return turnHorizon
		}
		e.turn = r
	}
	if wait := e.turn.DelayFrom(now); wait > 0 {
		return wait
	}
	e.turn = nil
	return 0
}

// giveBack returns e's booked turn to the budget unused (with b.mu held).
func (b *statusBook) giveBack(e *bookEntry) {
	if e != nil && e.turn != nil {
		e.turn.CancelAt(b.clock.Now())
		e.turn = nil
	}
}
