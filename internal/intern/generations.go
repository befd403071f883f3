package intern

// generations is a strong, bounded table: two generations of at most size
// entries and maxBytes bytes each (what cost says an entry holds). A value
// found is moved to the current generation, so those in use stay; the
// older generation is dropped when the current one fills. The zero value
// is ready to use; callers hold the lock.
type generations[K comparable, V any] struct {
	cur, old map[K]V
	// curBytes, oldBytes: what the entries of each generation cost.
	curBytes, oldBytes int
}

// intern returns the value held for k when fits says it may stand for the
// caller's, else the one fresh makes, and keeps it in the current
// generation under keyOf(value): a key of the table's own, never one of
// the caller's (a string key may be a slice of a decoder's whole buffer).
// size is how many entries a generation holds, maxBytes how many bytes;
// cost is what a value holds. A value that costs more than a generation
// may hold is handed out and not kept.
func (g *generations[K, V]) intern(size, maxBytes int, k K, fits func(V) bool, fresh func() V, keyOf func(V) K, cost func(V) int) V {
	if v, ok := g.cur[k]; ok && fits(v) {
		return v
	}
	v, ok := g.old[k]
	if ok && fits(v) {
		delete(g.old, k) // it moves to the current generation
		g.oldBytes -= cost(v)
	} else {
		v = fresh()
	}
	c := cost(v)
	if c > maxBytes {
		return v
	}
	if len(g.cur) >= size || g.curBytes+c > maxBytes || g.cur == nil {
		g.old, g.cur = g.cur, make(map[K]V, size/4)
		g.oldBytes, g.curBytes = g.curBytes, 0
	}
	key := keyOf(v)
	if was, ok := g.cur[key]; ok { // an entry under k that did not fit
		g.curBytes -= cost(was)
	}
	g.cur[key] = v
	g.curBytes += c
	return v
}

// len reports how many entries both generations hold.
func (g *generations[K, V]) len() int { return len(g.cur) + len(g.old) }

// bytes reports what the entries of both generations cost.
func (g *generations[K, V]) bytes() int { return g.curBytes + g.oldBytes }

// forget drops the entry held for k, in either generation, when is says
// it is the caller's.
func (g *generations[K, V]) forget(k K, is func(V) bool, cost func(V) int) {
	if v, ok := g.cur[k]; ok && is(v) {
		delete(g.cur, k)
		g.curBytes -= cost(v)
	}
	if v, ok := g.old[k]; ok && is(v) {
		delete(g.old, k)
		g.oldBytes -= cost(v)
	}
}
