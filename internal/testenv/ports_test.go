package testenv

import "testing"

func TestFreePortsNeverRepeat(t *testing.T) {
	seen := map[int]bool{}
	for range 50 {
		for _, p := range FreePorts(t, 3) {
			if seen[p] {
				t.Fatalf("port %d handed out twice", p)
			}
			seen[p] = true
		}
	}
}
