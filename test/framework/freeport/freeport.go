package freeport

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// handedOut are the ports this process handed out, each with its lock
// file, held open (and flock'ed) until the process ends.
var handedOut = struct {
	sync.Mutex
	ports map[int]*os.File
}{ports: map[int]*os.File{}}

// maxTries bounds the candidates looked at per call.
const maxTries = 1000

// lowest is the lowest port handed out: below it are the registered
// services people run on their machines.
const lowest = 10000

// LockDir holds one lock file per port handed out by any process on the
// machine (flock'ed while the process that holds it runs).
var LockDir = filepath.Join(os.TempDir(), "chartkeeper-freeport")

// Ports returns n distinct free loopback ports, none returned before by
// this process or held by another process using this package.
//
// They are drawn at random from below the kernel's ephemeral range
// (net.ipv4.ip_local_port_range): a port from the ephemeral range, free
// when probed, can be taken a moment later as the local port of any
// outgoing connection on the machine. Each port is locked across
// processes with a lock file in LockDir that its process holds until it
// exits, so two test binaries running at once never get the same port.
func Ports(n int) ([]int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	if err := os.MkdirAll(LockDir, 0o777); err != nil {
		return nil, fmt.Errorf("freeport: %w", err)
	}
	top := ephemeralStart() - 1
	out := make([]int, 0, n)
	for try := 0; len(out) < n; try++ {
		if try == maxTries {
			return nil, fmt.Errorf("freeport: no free loopback port in %d-%d after %d tries", lowest, top, maxTries)
		}
		port := lowest + rand.IntN(top-lowest+1)
		if _, ok := handedOut.ports[port]; ok {
			continue
		}
		lock, err := lockPort(port)
		if err != nil {
			return nil, err
		}
		if lock == nil {
			continue // another process holds it
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			lock.Close() // in use outside this package: leave it
			continue
		}
		l.Close() // its lock, not the probe, keeps it ours
		handedOut.ports[port] = lock
		out = append(out, port)
	}
	return out, nil
}

// lockPort takes port's lock file, or returns nil when another process
// holds it.
func lockPort(port int) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(LockDir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("freeport: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, nil
		}
		return nil, fmt.Errorf("freeport: locking port %d: %w", port, err)
	}
	return f, nil
}

// ephemeralStart is the first port of the kernel's ephemeral range, read
// once; 32768 (Linux's default) when it cannot be read or leaves fewer than
// 1000 ports above lowest.
var ephemeralStart = sync.OnceValue(func() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	p, err := strconv.Atoi(f[0])
	if err != nil || p <= lowest+1000 {
		return 32768
	}
	return p
})

// Addr returns a free loopback address ("127.0.0.1:port"), as Ports.
func Addr() (string, error) {
	p, err := Ports(1)
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p[0])), nil
}
