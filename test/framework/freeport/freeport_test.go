package freeport

import (
	"net"
	"testing"
)

func TestPortsNeverRepeat(t *testing.T) {
	seen := map[int]bool{}
	for range 50 {
		ps, err := Ports(3)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if seen[p] {
				t.Fatalf("port %d handed out twice", p)
			}
			seen[p] = true
		}
	}
}

func TestAddrIsBindable(t *testing.T) {
	a, err := Addr()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", a)
	if err != nil {
		t.Fatalf("the free address %s cannot be bound: %v", a, err)
	}
	l.Close()
}

// A port handed out is locked for every other process: its lock file
// cannot be taken, and it lies below the ephemeral range, where no
// outgoing connection takes it.
func TestPortsAreLockedAndBelowTheEphemeralRange(t *testing.T) {
	ps, err := Ports(2)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p < lowest || p >= ephemeralStart() {
			t.Errorf("port %d outside %d-%d", p, lowest, ephemeralStart()-1)
		}
		// flock locks belong to an open file: a second open of the lock
		// file stands for another process.
		f, err := lockPort(p)
		if err != nil {
			t.Fatal(err)
		}
		if f != nil {
			f.Close()
			t.Errorf("port %d: its lock was free to take again", p)
		}
	}
}
