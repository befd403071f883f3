package testenv

import (
	"net"
	"strconv"
	"sync"
	"testing"
)

// handedOut holds every port FreePorts returned in this process, so two
// calls never return the same port even after the first caller closed its
// probe listener and the kernel offers the port again.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// maxPortTries bounds the search for a port not handed out yet.
const maxPortTries = 1000

// FreePorts returns n free TCP ports on 127.0.0.1 that no earlier call in
// this process returned. The ports are free when returned; the caller binds
// them soon after.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	out := make([]int, 0, n)
	for try := 0; len(out) < n; try++ {
		if try == maxPortTries {
			t.Fatalf("no free loopback port after %d tries", maxPortTries)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l) // held until all are chosen: no duplicates within the call
		port := l.Addr().(*net.TCPAddr).Port
		if handedOut.ports[port] {
			continue
		}
		handedOut.ports[port] = true
		out = append(out, port)
	}
	return out
}

// FreeAddr is FreePorts for one port, as "127.0.0.1:port".
func FreeAddr(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePorts(t, 1)[0]))
}
