package freeport

import (
	"fmt"
	"net"
	"strconv"
	"sync"
)

// handedOut holds every port Ports returned in this process.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// maxTries bounds the search for a port not handed out yet.
const maxTries = 1000

// Ports returns n free TCP ports on 127.0.0.1 that no earlier call in this
// process returned. The caller binds them soon after.
func Ports(n int) ([]int, error) {
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
		if try == maxTries {
			return nil, fmt.Errorf("freeport: no free loopback port after %d tries", maxTries)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("freeport: %w", err)
		}
		held = append(held, l) // held until all are chosen: no duplicates within the call
		port := l.Addr().(*net.TCPAddr).Port
		if handedOut.ports[port] {
			continue
		}
		handedOut.ports[port] = true
		out = append(out, port)
	}
	return out, nil
}

// Addr is Ports for one port, as "127.0.0.1:port".
func Addr() (string, error) {
	p, err := Ports(1)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p[0])), nil
}
