package release

import "sync"

// runningActions is what this process knows of its own actions in flight,
// per release: a pending revision one of them holds is not abandoned.
// After a restart it is empty: nothing of ours runs.
type runningActions struct {
	mu sync.Mutex
	n  map[string]int
}

func newRunningActions() *runningActions { return &runningActions{n: map[string]int{}} }

// start marks an action on release key running; the returned func ends it.
func (r *runningActions) start(key string) (done func()) {
	r.mu.Lock()
	r.n[key]++
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.n[key]--; r.n[key] <= 0 {
			delete(r.n, key)
		}
	}
}

// has reports whether an action on release key is running.
func (r *runningActions) has(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[key] > 0
}
