package release

import (
	"fmt"
	"testing"
)

// TestMemoKeepsEveryEntryOfARelease checks a memo's answers on both sides
// of fewMax: what was set is got, what was dropped is gone, releases do
// not see each other's, and a release whose last entry went holds nothing.
func TestMemoKeepsEveryEntryOfARelease(t *testing.T) {
	for _, n := range []int{1, 3, fewMax, fewMax + 1, 3 * fewMax} {
		t.Run(fmt.Sprintf("%d entries", n), func(t *testing.T) {
			m := newMemo[int, string]()
			for i := range n {
				m.set("a", i, fmt.Sprint("a", i))
				m.set("b", i, fmt.Sprint("b", i))
			}
			m.set("a", 0, "again") // overwrites, adds nothing
			for i := range n {
				want := fmt.Sprint("a", i)
				if i == 0 {
					want = "again"
				}
				if v, ok := m.get("a", i); !ok || v != want {
					t.Fatalf("get(a, %d) = %q, %v; want %q", i, v, ok, want)
				}
			}
			if v, ok := m.get("a", n); ok {
				t.Fatalf("get(a, %d) = %q, never set", n, v)
			}
			if got := m.m["a"].len(); got != n {
				t.Fatalf("release a holds %d entries, want %d", got, n)
			}
			if n <= fewMax && m.m["a"].many != nil || n > fewMax && m.m["a"].few != nil {
				t.Fatalf("%d entries: few %d, many %v", n, len(m.m["a"].few), m.m["a"].many != nil)
			}
			m.drop("a", 0)
			if _, ok := m.get("a", 0); ok {
				t.Fatal("a dropped entry is still there")
			}
			for i := 1; i < n; i++ {
				if _, ok := m.get("a", i); !ok {
					t.Fatalf("dropping entry 0 lost entry %d", i)
				}
				m.drop("a", i)
			}
			if _, ok := m.m["a"]; ok {
				t.Fatal("a release whose every entry was dropped is still held")
			}
			if v, ok := m.get("b", n-1); !ok || v != fmt.Sprint("b", n-1) {
				t.Fatalf("release b: get = %q, %v after a's entries went", v, ok)
			}
			m.setOnly("b", 7, "only")
			if v, ok := m.get("b", 7); !ok || v != "only" || m.m["b"].len() != 1 {
				t.Fatalf("setOnly: get = %q, %v; %d entries", v, ok, m.m["b"].len())
			}
			m.forget("b")
			if _, ok := m.get("b", 7); ok || len(m.m) != 0 {
				t.Fatalf("forget left %d releases", len(m.m))
			}
		})
	}
}

// TestMemoHoldsNoSpareSlots checks that a release of a few entries holds
// a slice of exactly that many: the reason the memo is not a map of maps.
func TestMemoHoldsNoSpareSlots(t *testing.T) {
	m := newMemo[int, readyAt]()
	for i := range 3 {
		m.set("r", i, readyAt{current: true})
	}
	m.drop("r", 1)
	if e := m.m["r"]; len(e.few) != 2 || cap(e.few) != 2 {
		t.Fatalf("2 entries held in a slice of len %d, cap %d", len(e.few), cap(e.few))
	}
}
