package etcdcluster

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Addressing names the members of one cluster: member i is the Pod
// <name>-<i> of the StatefulSet, reached at fixed URLs.
type Addressing interface {
	// MemberName is the etcd member name (the Pod name) of ordinal i.
	MemberName(i int) string
	// PeerURL and ClientURL are where member i listens.
	PeerURL(i int) string
	ClientURL(i int) string
}

// PodDNS addresses members by their stable DNS names behind the chart's
// headless Service: <name>-<i>.<name>-headless.<namespace>.svc.
type PodDNS struct {
	Name, Namespace string
	TLS             bool
}

func (a PodDNS) scheme() string {
	if a.TLS {
		return "https"
	}
	return "http"
}

func (a PodDNS) host(i int) string {
	return fmt.Sprintf("%s-%d.%s-headless.%s.svc", a.Name, i, a.Name, a.Namespace)
}

// MemberName implements Addressing.
func (a PodDNS) MemberName(i int) string { return fmt.Sprintf("%s-%d", a.Name, i) }

// PeerURL implements Addressing.
func (a PodDNS) PeerURL(i int) string { return fmt.Sprintf("%s://%s:2380", a.scheme(), a.host(i)) }

// ClientURL implements Addressing.
func (a PodDNS) ClientURL(i int) string { return fmt.Sprintf("%s://%s:2379", a.scheme(), a.host(i)) }

// ordinalOf finds the ordinal whose peer URL the member has, or -1 for a
// member that is not one of the StatefulSet's (added by hand).
func ordinalOf(a Addressing, m Member, limit int) int {
	if i := nameOrdinal(a, m.Name); i >= 0 {
		return i
	}
	for i := 0; i < limit; i++ {
		for _, u := range m.PeerURLs {
			if u == a.PeerURL(i) {
				return i
			}
		}
	}
	return -1
}

// nameOrdinal parses "<name>-<i>" for the Addressing's name.
func nameOrdinal(a Addressing, name string) int {
	if name == "" {
		return -1
	}
	base := strings.TrimSuffix(a.MemberName(0), "0")
	rest, ok := strings.CutPrefix(name, base)
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 0 || a.MemberName(i) != name {
		return -1
	}
	return i
}

// Loopback addresses the members of one cluster on 127.0.0.1, at ports
// derived from its namespace and name: 16 ports (8 ordinals, client and
// peer) in 10000-32767. It is for the local development cluster, where
// `devcluster etcd-pods` runs a real etcd process for each kwok Pod; two
// clusters may collide (1 in 1,423 per pair), which shows as a failed bind
// in the member's log.
//
// The range ends below 32768, where Linux's default ephemeral port range
// (net.ipv4.ip_local_port_range, 32768-60999) begins: a port in that range
// can be held by any outgoing connection on the machine, and a member whose
// port is taken that way fails to bind on every restart.
type Loopback struct{ Name, Namespace string }

// LoopbackOrdinals is how many ordinals Loopback has ports for.
const LoopbackOrdinals = 8

// Loopback ports: [loopbackFirstPort, loopbackEndPort).
const (
	loopbackFirstPort = 10000
	loopbackEndPort   = 32768
	loopbackSlots     = (loopbackEndPort - loopbackFirstPort) / (2 * LoopbackOrdinals)
)

func (l Loopback) base() int {
	h := fnv.New32a()
	h.Write([]byte(l.Namespace + "/" + l.Name))
	return loopbackFirstPort + int(h.Sum32()%loopbackSlots)*2*LoopbackOrdinals
}

// MemberName implements Addressing.
func (l Loopback) MemberName(i int) string { return fmt.Sprintf("%s-%d", l.Name, i) }

// ClientURL implements Addressing.
func (l Loopback) ClientURL(i int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", l.base()+2*i)
}

// PeerURL implements Addressing.
func (l Loopback) PeerURL(i int) string {
	return fmt.Sprintf("http://127.0.0.1:%d", l.base()+2*i+1)
}

// MemberOrdinal parses the ordinal out of a member (Pod) name of the
// cluster, or -1.
func MemberOrdinal(a Addressing, name string) int { return nameOrdinal(a, name) }
