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
