// Package dictpack keeps byte strings that repeat each other compressed
// against a dictionary: another string of their family, kept once.
//
// The operator holds many strings of one shape: the JSON of every custom
// resource of a kind, the body of every release of a chart. What differs
// between two of them is names, times and digests; the rest is field
// names, condition reasons and the chart's rendered templates, the same
// in all. Compressed with S2 (github.com/klauspost/compress/s2) against a
// dictionary made of one of them, each keeps a fraction of its bytes: a
// quarter of a bench-shaped custom resource's JSON, 7% of a
// bench release's body (dictpack_test.go), where gzip at its best keeps
// over a quarter of that body. S2 packs such a string in about 2 µs and
// unpacks it in a fraction of one, with no compressor state to allocate
// (a gzip writer's is about a megabyte).
//
// A family's dictionary is the longest string seen in it so far (up to
// s2.MaxDictSize), replaced when one a quarter longer comes. Strings
// packed against an older dictionary keep it, through their Packed, until
// they are packed again.
//
// The dictionaries a Families holds are bounded by bytes (MaxBytes,
// DefaultMaxBytes: 8 MiB) as well as by count (Max): a dictionary is
// counted its string and the table S2 makes of it to encode (dictCost).
package dictpack

import (
	"bytes"
	"sync"

	"github.com/klauspost/compress/s2"
)

// Packed is a string as kept: an S2 block and the dictionary it was made
// against, or the string itself.
type Packed struct {
	b    []byte   // the S2 block; the string itself when dict is nil
	dict *s2.Dict // nil: b is not compressed
}

// Raw returns a Packed that holds b as it is.
func Raw(b []byte) Packed { return Packed{b: b} }

// Compressed reports whether p holds a compressed block.
func (p Packed) Compressed() bool { return p.dict != nil }

// Len is how many bytes p holds.
func (p Packed) Len() int { return len(p.b) }

// Unpack calls use with the string; use must not keep it (its buffer is
// reused).
func (p Packed) Unpack(use func(b []byte) error) error {
	if p.dict == nil {
		return use(p.b)
	}
	buf := scratch.Get().(*[]byte)
	defer scratch.Put(buf)
	b, err := p.dict.Decode((*buf)[:0], p.b)
	if err != nil {
		return err
	}
	*buf = b
	return use(b)
}

// Families keeps one dictionary per family key. A nil *Families packs
// nothing. The zero value is ready to use.
type Families[K comparable] struct {
	// Max bounds how many families hold a dictionary at once (0: no
	// bound). When a new family would pass it, every family's is dropped
	// and each makes a new one from its next string; strings packed
	// before keep theirs.
	Max int
	// MaxBytes bounds the bytes the families' dictionaries hold at once
	// (0: DefaultMaxBytes). When a new or grown dictionary would pass it,
	// every family's is dropped, as past Max. A dictionary that alone
	// would pass it is not made: its strings are kept as they are.
	MaxBytes int

	dicts sync.Map // K -> *dictionary
	// mu orders the making of dictionaries, and guards n and bytes.
	mu    sync.Mutex
	n     int
	bytes int
}

// DefaultMaxBytes bounds the dictionaries of a Families whose MaxBytes is
// 0: 8 MiB, about 80 dictionaries of the largest size (s2.MaxDictSize
// and its table), or hundreds of the size of a custom resource's JSON.
const DefaultMaxBytes = 8 << 20

// dictTable is what S2 allocates to encode against a dictionary: a table
// of 1<<14 uint16 (s2.Dict's fastTable).
const dictTable = 2 << 14

// dictCost is what a dictionary made of size bytes holds.
func dictCost(size int) int { return size + dictTable }

type dictionary struct {
	size int // the length of the string it was made from
	dict *s2.Dict
}

// Pack compresses b against its family's dictionary, making b the
// family's dictionary when it is the first of the family or a quarter
// longer than the one before. b is kept as it is (not copied) when no
// dictionary makes it shorter.
func (f *Families[K]) Pack(family K, b []byte) Packed {
	if f == nil {
		return Packed{b: b}
	}
	d := f.dictFor(family, b)
	if d == nil {
		return Packed{b: b}
	}
	buf := scratch.Get().(*[]byte)
	defer scratch.Put(buf)
	*buf = d.Encode((*buf)[:0], b)
	if len(*buf) >= len(b) {
		return Packed{b: b}
	}
	return Packed{b: bytes.Clone(*buf), dict: d}
}

// dictFor returns the family's dictionary for b, made from b when b is
// the first of its family or a quarter longer than the one before; nil
// when there is none and b is too short to be one.
func (f *Families[K]) dictFor(family K, b []byte) *s2.Dict {
	v, ok := f.dicts.Load(family)
	cur, _ := v.(*dictionary)
	if ok && (len(b) <= cur.size+cur.size/4 || cur.size >= s2.MaxDictSize) {
		return cur.dict
	}
	from := b
	if len(from) > s2.MaxDictSize {
		from = from[:s2.MaxDictSize] // a string's start is what its family shares most
	}
	keep := func() *s2.Dict {
		if cur != nil {
			return cur.dict
		}
		return nil
	}
	if dictCost(len(from)) > f.maxBytes() {
		return keep()
	}
	d := s2.MakeDict(bytes.Clone(from), nil)
	if d == nil {
		return keep()
	}
	f.store(family, &dictionary{size: len(from), dict: d})
	return d
}

// store makes d family's dictionary, dropping every family's when the
// families would pass Max or MaxBytes.
func (f *Families[K]) store(family K, d *dictionary) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, b := f.n, f.bytes+dictCost(d.size)
	if v, ok := f.dicts.Load(family); ok {
		b -= dictCost(v.(*dictionary).size)
	} else {
		n++
	}
	if (f.Max > 0 && n > f.Max) || b > f.maxBytes() {
		f.dicts.Clear()
		n, b = 1, dictCost(d.size)
	}
	f.n, f.bytes = n, b
	f.dicts.Store(family, d)
}

// maxBytes is the bound of the families' dictionaries.
func (f *Families[K]) maxBytes() int {
	if f.MaxBytes > 0 {
		return f.MaxBytes
	}
	return DefaultMaxBytes
}

// Bytes reports what the families' dictionaries hold (at most MaxBytes).
func (f *Families[K]) Bytes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bytes
}

// scratch holds buffers of a pack's or an unpack's size class.
var scratch = sync.Pool{New: func() any { return new([]byte) }}
