// Package longestfirst runs a package's parallel tests longest first.
//
// go test starts a package's parallel tests in an order of its own (at
// -parallel 8, of the end-to-end package's sixty-odd parallel tests the
// ones declared first started last), so a two-minute test could start when
// every other test was done and leave the machine idle for most of its run.
// Started longest first, the same tests finish closer together: on 2
// cores, against one running cluster, the end-to-end package took 339 s
// before (one run) and 294 and 252 s after (two runs).
//
// A package opts in from its TestMain, which takes over -parallel:
//
//	func TestMain(m *testing.M) {
//		flag.Parse()
//		sched = longestfirst.FromParallelFlag()
//		os.Exit(m.Run())
//	}
//
// and each parallel test calls sched.Parallel(t, about) in place of
// t.Parallel(), about being roughly how long it takes (0 when short).
// Tests with the same estimate start in the order they were declared.
// Parallel subtests keep calling t.Parallel(); they run beside their
// parent's slot, not in one of their own.
package longestfirst

import (
	"flag"
	"sort"
	"strconv"
	"sync"
	"time"
)

// T is what Parallel needs of a *testing.T.
type T interface {
	Helper()
	Parallel()
	Cleanup(func())
}

// Scheduler hands out a fixed number of slots to parallel tests, longest
// first.
type Scheduler struct {
	mu         sync.Mutex
	free       int
	registered int // tests that called Parallel
	waiting    []*waiter
	gathered   bool // every registered test had arrived once, or gatherFor passed
	gatherFor  time.Duration
	timer      *time.Timer
}

type waiter struct {
	about time.Duration
	seq   int
	start chan struct{}
}

// GatherFor is how long the first parallel test to arrive waits for the
// others before the scheduler starts whatever has arrived. They all arrive
// within milliseconds of each other (go test releases them together once
// the serial tests are done); the limit only matters when one of them never
// arrives, say because it failed between registering and arriving.
const GatherFor = 2 * time.Second

// New returns a scheduler with slots slots (at least one).
func New(slots int) *Scheduler {
	return &Scheduler{free: max(slots, 1), gatherFor: GatherFor}
}

// Unlimited is what FromParallelFlag sets -test.parallel to: the scheduler,
// not go test, decides how many parallel tests run at once.
const Unlimited = 1 << 16

// FromParallelFlag returns a scheduler with as many slots as -test.parallel
// (go test -parallel, GOMAXPROCS by default) and sets that flag to
// Unlimited. Call it in TestMain after flag.Parse and before m.Run.
func FromParallelFlag() *Scheduler {
	slots := 0
	if f := flag.Lookup("test.parallel"); f != nil {
		slots, _ = strconv.Atoi(f.Value.String())
		_ = f.Value.Set(strconv.Itoa(Unlimited))
	}
	return New(slots)
}

// Parallel marks t parallel (t.Parallel), then waits for a slot. about is
// roughly how long t runs; longer tests get slots first. The slot is
// returned when t and its cleanups are done.
func (s *Scheduler) Parallel(t T, about time.Duration) {
	t.Helper()
	s.mu.Lock()
	s.registered++
	seq := s.registered
	s.mu.Unlock()
	t.Parallel() // returns once the serial tests are done
	w := &waiter{about: about, seq: seq, start: make(chan struct{})}
	s.mu.Lock()
	s.waiting = append(s.waiting, w)
	if !s.gathered && s.timer == nil {
		s.timer = time.AfterFunc(s.gatherFor, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.gathered = true
			s.dispatch()
		})
	}
	s.dispatch()
	s.mu.Unlock()
	<-w.start
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.free++
		s.dispatch()
	})
}

// dispatch starts waiting tests, longest first, while slots are free;
// before the first start it waits until every registered test is waiting.
// s.mu is held.
func (s *Scheduler) dispatch() {
	if !s.gathered && len(s.waiting) < s.registered {
		return
	}
	if !s.gathered {
		s.gathered = true
		s.timer.Stop()
	}
	sort.SliceStable(s.waiting, func(i, j int) bool {
		a, b := s.waiting[i], s.waiting[j]
		if a.about != b.about {
			return a.about > b.about
		}
		return a.seq < b.seq
	})
	for s.free > 0 && len(s.waiting) > 0 {
		s.free--
		close(s.waiting[0].start)
		s.waiting = s.waiting[1:]
	}
}
