package release

import (
	"sync"
	"time"
)

// expectations remember what our last action on a release should make the
// cache show, so that a step never acts on a stale view: after an install
// of revision 1 the cache may still show no release for a moment.
type expectations struct {
	mu sync.Mutex
	m  map[string]expectation
}

type expectation struct {
	latest int // the latest version the cache must show (0: no release)
	at     time.Time
}

// expectationTTL bounds how long a step waits for the cache: past it the
// cache is trusted again (someone else may have changed the release).
const expectationTTL = 30 * time.Second

func newExpectations() *expectations { return &expectations{m: map[string]expectation{}} }

// expect records that the cache must show latest as the newest version.
func (e *expectations) expect(key string, latest int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[key] = expectation{latest: latest, at: time.Now()}
}

// satisfied reports whether the cached latest version meets the
// expectation, and forgets it once met.
func (e *expectations) satisfied(key string, cachedLatest int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	exp, ok := e.m[key]
	if !ok {
		return true
	}
	want := exp.latest
	if (want == 0 && cachedLatest == 0) || (want > 0 && cachedLatest >= want) || time.Since(exp.at) > expectationTTL {
		delete(e.m, key)
		return true
	}
	return false
}

func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}
