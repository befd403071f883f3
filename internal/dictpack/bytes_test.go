package dictpack

import (
	"bytes"
	"fmt"
	"testing"
)

// TestFamiliesAreBoundedByBytes: the families' dictionaries hold at most
// MaxBytes (a grown dictionary counted anew, not twice); past it they are
// made anew, what was packed before still unpacks, and a dictionary that
// alone would pass the bound is not made.
func TestFamiliesAreBoundedByBytes(t *testing.T) {
	one := dictCost(len(resourceJSON("0")))
	t.Run("many families", func(t *testing.T) {
		f := Families[int]{MaxBytes: 4 * one}
		var packed []Packed
		for i := range 20 {
			packed = append(packed, f.Pack(i, resourceJSON(fmt.Sprint(i))))
			if b := f.Bytes(); b > f.MaxBytes || b == 0 {
				t.Fatalf("after %d families the dictionaries hold %d bytes, want some and at most %d", i+1, b, f.MaxBytes)
			}
		}
		held := 0
		f.dicts.Range(func(any, any) bool { held++; return true })
		if held > 4 {
			t.Errorf("%d families hold a dictionary, want at most 4", held)
		}
		for i, p := range packed {
			if !p.Compressed() || !bytes.Equal(unpacked(t, p), resourceJSON(fmt.Sprint(i))) {
				t.Errorf("string %d: compressed %v, or came back changed", i, p.Compressed())
			}
		}
	})
	t.Run("a grown dictionary", func(t *testing.T) {
		var f Families[string]
		short := []byte(`{"apiVersion":"pack.test/v1","kind":"Growing","spec":{"replicas":1}}`)
		f.Pack("growing", short)
		if b := f.Bytes(); b != dictCost(len(short)) {
			t.Fatalf("one dictionary of %d bytes is counted %d, want %d", len(short), b, dictCost(len(short)))
		}
		f.Pack("growing", resourceJSON("grown"))
		if b := f.Bytes(); b != dictCost(len(resourceJSON("grown"))) {
			t.Errorf("the grown dictionary is counted %d, want %d (the one it replaced no more)", b, dictCost(len(resourceJSON("grown"))))
		}
	})
	t.Run("one larger than the bound", func(t *testing.T) {
		f := Families[int]{MaxBytes: one - 1}
		p := f.Pack(1, resourceJSON("1"))
		if p.Compressed() || f.Bytes() != 0 {
			t.Errorf("compressed %v, dictionaries of %d bytes: want none made", p.Compressed(), f.Bytes())
		}
		if !bytes.Equal(unpacked(t, p), resourceJSON("1")) {
			t.Error("the string came back changed")
		}
	})
	t.Run("the default", func(t *testing.T) {
		var f Families[int]
		for i := range 2 * DefaultMaxBytes / one {
			f.Pack(i, resourceJSON(fmt.Sprint(i)))
		}
		if b := f.Bytes(); b > DefaultMaxBytes || b < DefaultMaxBytes/2 {
			t.Errorf("the dictionaries hold %d bytes, want at most DefaultMaxBytes (%d) and near it", b, DefaultMaxBytes)
		}
	})
}
