package helm

import (
	"sync"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// supersedeDriver sends a revision's superseded mark alongside the
// action's next write instead of before it.
//
// When an upgrade or a rollback succeeds, Helm marks the revision it
// replaces superseded and then the new one deployed: two requests, the
// second sent only once the first is answered, on every upgrade, though
// neither write depends on the other. make bench found the release
// engine's workers busy all through a thousand upgrades, each waiting for
// six requests in turn; this takes one of them off that chain.
//
// So an Update that marks a revision superseded is sent in the background.
// The action's next Update (the deployed mark) is sent at once, and waits
// for both answers; every other call (reads, creates, deletes) and flush
// wait for the background write before they go. Nothing an action reads
// is ever older than what it wrote.
//
// Helm only logs a failed superseded mark and goes on (recordRelease), so
// this does the same. Should the process die between the two writes, the
// API server holds what Helm's order can leave too: revision 1 superseded
// with revision 2 still pending (unlocked by the next action), or both
// deployed (the later one is the release's; a rollback supersedes every
// deployed revision).
type supersedeDriver struct {
	driver.Driver
	log func(string, ...any)

	mu       sync.Mutex
	done     *sync.Cond // signalled when inflight drops to 0
	inflight int        // superseded marks not answered yet
}

func newSupersedeDriver(d driver.Driver, log func(string, ...any)) *supersedeDriver {
	s := &supersedeDriver{Driver: d, log: log}
	s.done = sync.NewCond(&s.mu)
	return s
}

// wait returns once no superseded mark is in flight.
func (d *supersedeDriver) wait() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.inflight > 0 {
		d.done.Wait()
	}
}

// background sends a superseded mark.
func (d *supersedeDriver) background(key string, rls *release.Release) {
	d.mu.Lock()
	d.inflight++
	d.mu.Unlock()
	go func() {
		err := d.Driver.Update(key, rls)
		if err != nil {
			d.log("warning: Failed to update release %s: %s", rls.Name, err) // Helm's words (recordRelease)
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.inflight--; d.inflight == 0 {
			d.done.Broadcast()
		}
	}()
}

func (d *supersedeDriver) Update(key string, rls *release.Release) error {
	if rls.Info != nil && rls.Info.Status == release.StatusSuperseded {
		d.background(key, rls)
		return nil
	}
	defer d.wait()
	return d.Driver.Update(key, rls)
}

func (d *supersedeDriver) Create(key string, rls *release.Release) error {
	d.wait()
	return d.Driver.Create(key, rls)
}

func (d *supersedeDriver) Get(key string) (*release.Release, error) {
	d.wait()
	return d.Driver.Get(key)
}

func (d *supersedeDriver) Delete(key string) (*release.Release, error) {
	d.wait()
	return d.Driver.Delete(key)
}

func (d *supersedeDriver) Query(labels map[string]string) ([]*release.Release, error) {
	d.wait()
	return d.Driver.Query(labels)
}

func (d *supersedeDriver) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	d.wait()
	return d.Driver.List(filter)
}

// flush waits for the background write, then flushes what the driver
// below holds.
func (d *supersedeDriver) flush() error {
	d.wait()
	if f, ok := d.Driver.(flusher); ok {
		return f.flush()
	}
	return nil
}

// flusher is a driver that holds writes until an action returns.
type flusher interface{ flush() error }
