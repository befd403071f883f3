package intern

// generations is a strong, bounded table: two generations of at most size
// entries each. A value found is moved to the current generation, so those
// in use stay; the older generation is dropped when the current one fills.
// The zero value is ready to use; callers hold the lock.
type generations[K comparable, V any] struct {
	cur, old map[K]V
}

// intern returns the value held for k when fits says it may stand for the
// caller's, else the one fresh makes, and keeps it in the current
// generation under keyOf(value): a key of the table's own, never one of
// the caller's (a string key may be a slice of a decoder's whole buffer).
// size is how many entries a generation holds.
func (g *generations[K, V]) intern(size int, k K, fits func(V) bool, fresh func() V, keyOf func(V) K) V {
	if v, ok := g.cur[k]; ok && fits(v) {
		return v
	}
	v, ok := g.old[k]
	if !ok || !fits(v) {
		v = fresh()
	}
	if len(g.cur) >= size || g.cur == nil {
		g.old, g.cur = g.cur, make(map[K]V, size/4)
	}
	g.cur[keyOf(v)] = v
	return v
}

// len reports how many entries both generations hold.
func (g *generations[K, V]) len() int { return len(g.cur) + len(g.old) }

// forget drops the entry held for k, in either generation, when is says
// it is the caller's.
func (g *generations[K, V]) forget(k K, is func(V) bool) {
	for _, m := range []map[K]V{g.cur, g.old} {
		if v, ok := m[k]; ok && is(v) {
			delete(m, k)
		}
	}
}
