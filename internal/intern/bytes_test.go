package intern

import (
	"fmt"
	"strings"
	"testing"
)

// TestTableIsBoundedByBytes: long strings and large maps fill a table's
// bytes before its counts; the table holds at most MaxBytes however many
// are asked for, a string or map in use stays shared, and one that costs
// more than a generation may hold is handed out, not kept.
func TestTableIsBoundedByBytes(t *testing.T) {
	const maxBytes = 256 << 10
	pad := strings.Repeat("x", 200)
	annotation := strings.Repeat("y", 4<<10)
	tests := []struct {
		name string
		ask  func(tab *Table, i int) bool // asks for the i-th; true: the hot one is still shared
	}{
		{"long strings", func() func(*Table, int) bool {
			var hot string
			return func(tab *Table, i int) bool {
				if i == 0 {
					hot = tab.String(fresh("chartkeeper.dev/managed"))
				}
				tab.String(fmt.Sprintf("%s-%d", pad, i))
				return same(tab.String(fresh("chartkeeper.dev/managed")), hot)
			}
		}()},
		{"maps with a large annotation", func() func(*Table, int) bool {
			var hot map[string]string
			return func(tab *Table, i int) bool {
				if i == 0 {
					hot = tab.Map(labels("app", "web"))
				}
				tab.Map(labels("note", annotation, "instance", fmt.Sprint(i)))
				return sameMap(tab.Map(labels("app", "web")), hot)
			}
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab := &Table{MaxBytes: maxBytes}
			for i := range 2000 { // fewer than a generation's count
				if !tc.ask(tab, i) {
					t.Fatalf("after %d asked, the one in use was copied anew", i)
				}
				if b := tab.Bytes(); b > maxBytes {
					t.Fatalf("after %d asked, the table holds %d bytes, more than its %d", i, b, maxBytes)
				}
			}
			if b := tab.Bytes(); b < maxBytes/8 {
				t.Errorf("the table holds %d bytes: too few for the test to show the bound", b)
			}
		})
	}

	t.Run("a value larger than a generation", func(t *testing.T) {
		tab := &Table{MaxBytes: 4 << 10}
		big := labels("note", annotation)
		if got := tab.Map(big); !sameMap(got, big) {
			t.Fatal("a map larger than a generation was not handed out as itself")
		}
		if tab.Maps() != 0 {
			t.Errorf("the table keeps %d maps, want none: the one asked for costs more than a generation", tab.Maps())
		}
		if b := tab.Bytes(); b > 4<<10 {
			t.Errorf("the table holds %d bytes, more than its %d", b, 4<<10)
		}
	})

	t.Run("forget gives the bytes back", func(t *testing.T) {
		tab := &Table{}
		m := tab.Map(labels("status", "pending-install", "name", "web"))
		before := tab.Bytes()
		tab.Forget(labels("status", "pending-install", "name", "web"))
		if after := tab.Bytes(); after != before-mapCost(m) {
			t.Errorf("after Forget the table holds %d bytes, want %d", after, before-mapCost(m))
		}
	})
}

// TestDefaultBoundIsDocumented: a table whose MaxBytes is 0 is bounded by
// DefaultMaxBytes.
func TestDefaultBoundIsDocumented(t *testing.T) {
	tab := &Table{}
	annotation := strings.Repeat("z", 64<<10)
	for i := range 200 { // 12.5 MiB asked for
		tab.Map(labels("note", annotation, "instance", fmt.Sprint(i)))
	}
	if b := tab.Bytes(); b > DefaultMaxBytes || b < DefaultMaxBytes/8 {
		t.Errorf("the table holds %d bytes, want at most DefaultMaxBytes (%d) and near it", b, DefaultMaxBytes)
	}
}
