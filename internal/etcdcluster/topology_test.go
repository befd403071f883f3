package etcdcluster

import (
	"fmt"
	"net/url"
	"strconv"
	"testing"
)

// TestLoopbackPortsStayOutOfTheEphemeralRange: every member port of every
// cluster lies below Linux's default ephemeral range (32768-60999), where an
// outgoing connection could already hold it. A member of "db" in a
// namespace whose hash gave port 32774 once failed to bind on every restart.
func TestLoopbackPortsStayOutOfTheEphemeralRange(t *testing.T) {
	port := func(raw string) int {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		p, err := strconv.Atoi(u.Port())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	seen := map[int]bool{}
	for i := range 20000 {
		l := Loopback{Name: "db", Namespace: fmt.Sprintf("test-%05d", i)}
		ports := map[int]bool{}
		for ord := range LoopbackOrdinals {
			for _, p := range []int{port(l.ClientURL(ord)), port(l.PeerURL(ord))} {
				if p < 1024 || p >= 32768 {
					t.Fatalf("%s/%s member %d: port %d is outside 1024-32767", l.Namespace, l.Name, ord, p)
				}
				ports[p] = true
			}
		}
		if len(ports) != 2*LoopbackOrdinals {
			t.Fatalf("%s/%s: %d distinct ports for %d ordinals", l.Namespace, l.Name, len(ports), LoopbackOrdinals)
		}
		seen[l.base()] = true
	}
	if len(seen) != loopbackSlots {
		t.Errorf("20,000 clusters used %d of %d port blocks", len(seen), loopbackSlots)
	}
}
