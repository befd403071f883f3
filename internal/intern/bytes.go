package intern

// DefaultMaxBytes is the bound of a Table whose MaxBytes is 0 (Default's):
// 8 MiB, 4 MiB of strings and 4 MiB of maps. Two full generations of
// strings, at the lengths of labels, names and condition reasons (tens of
// bytes), hold about 2 MiB; the bytes bound the table when its strings, or
// the maps of labels and annotations, are long (a large annotation in
// every object, say), where the counts alone did not.
const DefaultMaxBytes = 8 << 20

// What an entry is counted, beyond the bytes of its strings: the string
// headers of a map entry's key and value, and the share of the map's
// buckets each entry takes (Go's maps hold 8 entries per group, with a
// control word, and are at most 7/8 full).
const (
	stringHeader = 16
	entryCost    = 2*stringHeader + 8
	mapHeader    = 48
)

// stringCost is what a string held in the table costs: its bytes and the
// table's entry (its key and value share the bytes).
func stringCost(s string) int { return len(s) + entryCost }

// mapCost is what a map held in the table costs: its header, and each
// entry's strings and slot. Its strings are counted though the string
// table may share them: the bound is an upper one.
func mapCost(m map[string]string) int {
	n := mapHeader + entryCost // and the table's own entry
	for k, v := range m {
		n += len(k) + len(v) + entryCost
	}
	return n
}

// generationBytes is how many bytes one generation of strings, or of
// maps, holds: a quarter of the table's bound.
func (t *Table) generationBytes() int {
	if t.MaxBytes > 0 {
		return t.MaxBytes / 4
	}
	return DefaultMaxBytes / 4
}

// Bytes reports what the table's strings and maps are counted (at most
// its MaxBytes).
func (t *Table) Bytes() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.strings.bytes() + t.maps.bytes()
}
