package release

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// memo remembers something per key within a release (a released object's
// UID, a revision's version), grouped by release so that forgetting a
// release frees its entries.
type memo[K comparable, V any] struct {
	mu sync.Mutex
	m  map[string]map[K]V
}

func newMemo[K comparable, V any]() *memo[K, V] { return &memo[K, V]{m: map[string]map[K]V{}} }

func (t *memo[K, V]) get(release string, k K) (V, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.m[release][k]
	return v, ok
}

func (t *memo[K, V]) set(release string, k K, v V) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m[release] == nil {
		t.m[release] = map[K]V{}
	}
	t.m[release][k] = v
}

func (t *memo[K, V]) drop(release string, k K) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m[release], k)
}

// setOnly remembers v as the release's one entry (the latest revision's).
func (t *memo[K, V]) setOnly(release string, k K, v V) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m[release] = map[K]V{k: v}
}

func (t *memo[K, V]) forget(release string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, release)
}

// objectMemo remembers something per released object (by UID).
type objectMemo[V any] = memo[types.UID, V]

func newObjectMemo[V any]() *objectMemo[V] { return newMemo[types.UID, V]() }

// revisionMemo remembers something per revision of a release.
type revisionMemo[V any] = memo[int, V]
