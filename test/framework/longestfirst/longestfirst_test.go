package longestfirst

import (
	"flag"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeT is a parallel test as the scheduler sees it: Parallel says it was
// called (the scheduler has registered the test by then) and returns when
// the serial phase (barrier) is over.
type fakeT struct {
	entered  chan struct{}
	barrier  <-chan struct{}
	cleanups []func()
}

func (f *fakeT) Helper()          {}
func (f *fakeT) Parallel()        { close(f.entered); <-f.barrier }
func (f *fakeT) Cleanup(c func()) { f.cleanups = append(f.cleanups, c) }
func (f *fakeT) finish() {
	for _, c := range slices.Backward(f.cleanups) {
		c()
	}
}

type suite struct {
	sched   *Scheduler
	barrier chan struct{}
	mu      sync.Mutex
	started []string
	running map[string]*fakeT
	peak    int
	wg      sync.WaitGroup
}

func newSuite(slots int) *suite {
	return &suite{sched: New(slots), barrier: make(chan struct{}), running: map[string]*fakeT{}}
}

// add runs a test the way go test does: up to its Parallel call now
// (serially), the rest after the barrier.
func (s *suite) add(name string, about time.Duration) {
	t := &fakeT{entered: make(chan struct{}), barrier: s.barrier}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.sched.Parallel(t, about)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.started = append(s.started, name)
		s.running[name] = t
		s.peak = max(s.peak, len(s.running))
	}()
	<-t.entered
}

// waitStarted waits until n tests have started, at most 5 s.
func (s *suite) waitStarted(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		got := slices.Clone(s.started)
		s.mu.Unlock()
		if len(got) >= n {
			return got
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("fewer than %d tests started within 5 s: %v", n, s.started)
	return nil
}

// finish ends a running test, which returns its slot.
func (s *suite) finish(name string) {
	s.mu.Lock()
	t := s.running[name]
	delete(s.running, name)
	s.mu.Unlock()
	t.finish()
}

func TestLongestStartFirstAndSlotsAreKept(t *testing.T) {
	s := newSuite(2)
	s.add("short-a", 0)
	s.add("long", 2*time.Minute)
	s.add("short-b", 0)
	s.add("medium", 30*time.Second)
	s.add("medium-later", 30*time.Second)
	close(s.barrier)
	// The two longest take the two slots; the rest wait.
	first := s.waitStarted(t, 2)
	slices.Sort(first)
	if !slices.Equal(first, []string{"long", "medium"}) {
		t.Fatalf("first to start: %v, want long and medium", first)
	}
	time.Sleep(20 * time.Millisecond)
	if got := s.waitStarted(t, 2); len(got) != 2 {
		t.Fatalf("%d tests running with 2 slots: %v", len(got), got)
	}
	// Each slot returned goes to the longest waiting; equal estimates
	// start in the order they were declared.
	for i, step := range []struct{ finish, next string }{
		{"medium", "medium-later"},
		{"long", "short-a"},
		{"medium-later", "short-b"},
	} {
		s.finish(step.finish)
		if got := s.waitStarted(t, 3+i); got[2+i] != step.next {
			t.Fatalf("after %s finished, %s started, want %s", step.finish, got[2+i], step.next)
		}
	}
	s.finish("short-a")
	s.finish("short-b")
	s.wg.Wait()
	if s.peak > 2 {
		t.Fatalf("%d tests ran at once with 2 slots", s.peak)
	}
}

func TestOneThatNeverArrivesDoesNotHoldTheRestPast(t *testing.T) {
	s := newSuite(4)
	s.sched.gatherFor = 50 * time.Millisecond
	s.add("arrives", 0)
	s.sched.mu.Lock()
	s.sched.registered++ // registered, then failed before it arrived
	s.sched.mu.Unlock()
	close(s.barrier)
	if got := s.waitStarted(t, 1); !slices.Equal(got, []string{"arrives"}) {
		t.Fatalf("started %v", got)
	}
	s.finish("arrives")
	s.wg.Wait()
}

func TestFromParallelFlagTakesOverTheLimit(t *testing.T) {
	f := flag.Lookup("test.parallel")
	old := f.Value.String()
	t.Cleanup(func() { _ = f.Value.Set(old) })
	if err := f.Value.Set("3"); err != nil {
		t.Fatal(err)
	}
	s := FromParallelFlag()
	if s.free != 3 {
		t.Errorf("%d slots, want 3 (-test.parallel)", s.free)
	}
	if got := f.Value.String(); got != "65536" {
		t.Errorf("-test.parallel is %s after, want %d", got, Unlimited)
	}
}
