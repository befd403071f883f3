package intern

import (
	"hash/maphash"
	"maps"
)

// MapGeneration is how many maps a generation of the table holds: fewer
// than strings, since a map outlives the objects that shared it for as
// long as the table holds it (at most two generations).
const MapGeneration = 1 << 12

// mapSeed hashes map contents; one per process, as the table is.
var mapSeed = maphash.MakeSeed()

// Map returns m, or a map equal to it that the table holds, its keys and
// values interned. The maps a cache keeps are mostly equal to others: the
// labels of a release's Deployment, Service and ConfigMap, or a release
// Secret's labels as the storage wrote them and as the metadata cache
// decoded them. Each held its own copy (make bench, N=300: a tenth of the
// live heap were labels maps).
//
// Neither m nor the map returned may be changed afterwards: both may be
// shared. A nil or empty map is returned as it is.
func (t *Table) Map(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	t.StringMap(m)
	h := mapHash(m)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.maps.intern(MapGeneration, t.generationBytes(), h, func(v map[string]string) bool { return maps.Equal(v, m) },
		func() map[string]string { return m }, func(map[string]string) uint64 { return h }, mapCost)
}

// Forget drops the table's map equal to m, if it holds one: m's content is
// stale, and no map equal to it will be asked for again (a release
// Secret's labels once the Secret was rewritten: its status, its
// modifiedAt). Without it the table kept such maps for two of its
// generations after the objects that shared them had moved on (make
// bench, N=1,000: three of every five label maps of release Secrets held).
// Maps already handed out stay as they are.
func (t *Table) Forget(m map[string]string) {
	if len(m) == 0 {
		return
	}
	h := mapHash(m)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.maps.forget(h, func(v map[string]string) bool { return maps.Equal(v, m) }, mapCost)
}

// mapHash hashes m's entries in any order (a sum of each entry's hash).
func mapHash(m map[string]string) uint64 {
	var sum uint64
	var h maphash.Hash
	h.SetSeed(mapSeed)
	for k, v := range m {
		h.Reset()
		h.WriteString(k)
		h.WriteByte(0)
		h.WriteString(v)
		sum += h.Sum64()
	}
	return sum
}

// Maps reports how many maps the table holds.
func (t *Table) Maps() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.maps.len()
}
