// Package intern keeps one copy of the strings the operator's caches hold
// over and over: label and annotation keys and values, namespaces, the
// keys of every custom resource's decoded JSON, condition reasons and
// messages, timestamps. A decoder allocates each of them anew for every
// object (make bench, N=1,000: a fifth of a cached custom resource's
// memory, and of a released object's metadata, were such copies).
//
// The cache transforms pass what they keep through here; equal strings
// then share their bytes. The table is strong and bounded: two
// generations of at most Generation strings each, and, in all, at most
// Table.MaxBytes bytes (DefaultMaxBytes, 8 MiB: half for strings, half
// for maps; see bytes.go for what an entry is counted). A string looked up is
// moved to the current one, so those in use stay; one seen once (a UID, a
// digest) ages out with its generation. Strings already handed out stay
// valid whatever the table forgets: a forgotten string is only no longer
// shared with the copies made after it.
//
// The standard library's unique package was not enough on its own: its
// canonical copies live only while a unique.Handle does, and a cache holds
// strings, not handles, so after each garbage collection equal strings
// were copied anew.
package intern

import (
	"strings"
	"sync"
)

// Generation is how many strings a generation of the table holds.
const Generation = 1 << 14

// MaxLen is the longest string interned; longer ones (a rendered
// document, a certificate) are rarely equal and cost a hash to compare.
const MaxLen = 256

// Table is a bounded string table (and map table, Map). The zero value is
// ready to use.
type Table struct {
	// MaxBytes bounds the bytes the table holds (0: DefaultMaxBytes):
	// half of it for strings, half for maps, each in two generations.
	// Set it before the table is used.
	MaxBytes int

	mu      sync.Mutex
	strings generations[string, string]
	// maps: the maps Map shares, by a hash of their content.
	maps generations[uint64, map[string]string]
}

// Default is the table the cache transforms share.
var Default = &Table{}

// String returns s, or a string equal to it that the table holds.
func (t *Table) String(s string) string {
	if s == "" || len(s) > MaxLen {
		return s
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.strings.intern(Generation, t.generationBytes(), s, func(string) bool { return true },
		func() string { return strings.Clone(s) }, // not a slice of a decoder's buffer
		func(v string) string { return v }, stringCost)
}

// Len reports how many strings the table holds.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.strings.len()
}

// String interns s in the Default table.
func String(s string) string { return Default.String(s) }
