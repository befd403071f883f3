package release

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// memo remembers something per key within a release (a released object's
// UID, a revision's version), grouped by release so that forgetting a
// release frees its entries.
//
// A release's entries are few: a handful of objects, one or two
// revisions. A Go map holds eight slots however few it has (a readiness
// memo of three objects took 512 bytes per release), so up to fewMax
// entries are kept in a slice of their exact size, and only more in a map.
type memo[K comparable, V any] struct {
	mu sync.Mutex
	m  map[string]entries[K, V]
}

// fewMax is how many entries of a release are kept in a slice, searched
// in turn; a release with more has a map.
const fewMax = 8

// entries are one release's: in few, or in many once there were more
// than fewMax.
type entries[K comparable, V any] struct {
	few  []pair[K, V]
	many map[K]V
}

type pair[K comparable, V any] struct {
	k K
	v V
}

func newMemo[K comparable, V any]() *memo[K, V] { return &memo[K, V]{m: map[string]entries[K, V]{}} }

func (t *memo[K, V]) get(release string, k K) (V, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[release].get(k)
}

func (t *memo[K, V]) set(release string, k K, v V) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m[release] = t.m[release].set(k, v)
}

func (t *memo[K, V]) drop(release string, k K) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[release]
	if !ok {
		return
	}
	if e = e.drop(k); e.len() == 0 {
		delete(t.m, release)
		return
	}
	t.m[release] = e
}

// setOnly remembers v as the release's one entry (the latest revision's).
func (t *memo[K, V]) setOnly(release string, k K, v V) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m[release] = entries[K, V]{few: []pair[K, V]{{k, v}}}
}

func (t *memo[K, V]) forget(release string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, release)
}

func (e entries[K, V]) get(k K) (V, bool) {
	if e.many != nil {
		v, ok := e.many[k]
		return v, ok
	}
	for i := range e.few {
		if e.few[i].k == k {
			return e.few[i].v, true
		}
	}
	var zero V
	return zero, false
}

// set returns e with k's value v. The slice grows by one entry at a time:
// an append's spare capacity would be held for as long as the release.
func (e entries[K, V]) set(k K, v V) entries[K, V] {
	if e.many != nil {
		e.many[k] = v
		return e
	}
	for i := range e.few {
		if e.few[i].k == k {
			e.few[i].v = v
			return e
		}
	}
	if len(e.few) < fewMax {
		few := make([]pair[K, V], len(e.few)+1)
		copy(few, e.few)
		few[len(e.few)] = pair[K, V]{k, v}
		return entries[K, V]{few: few}
	}
	many := make(map[K]V, len(e.few)+1)
	for _, p := range e.few {
		many[p.k] = p.v
	}
	many[k] = v
	return entries[K, V]{many: many}
}

func (e entries[K, V]) drop(k K) entries[K, V] {
	if e.many != nil {
		delete(e.many, k)
		return e
	}
	for i := range e.few {
		if e.few[i].k == k {
			few := make([]pair[K, V], 0, len(e.few)-1)
			few = append(few, e.few[:i]...)
			return entries[K, V]{few: append(few, e.few[i+1:]...)}
		}
	}
	return e
}

func (e entries[K, V]) len() int {
	if e.many != nil {
		return len(e.many)
	}
	return len(e.few)
}

// objectMemo remembers something per released object (by UID).
type objectMemo[V any] = memo[types.UID, V]

func newObjectMemo[V any]() *objectMemo[V] { return newMemo[types.UID, V]() }

// revisionMemo remembers something per revision of a release.
type revisionMemo[V any] = memo[int, V]
