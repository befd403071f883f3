package etcdcluster

import (
	"fmt"
	"strings"
)

// upgrade rolls a new version one Pod at a time, highest ordinal first.
func upgrade(v view, p Plan) (Plan, bool) {
	set, want := v.o.Set, v.o.Spec.Version
	if want == set.Version && set.Partition == 0 && allUpdated(set) {
		return p, false
	}
	if want != set.Version {
		if err := checkUpgradePath(set.Version, want); err != nil {
			p.Phase, p.Blocked, p.Message = PhaseHalted, true, err.Error()
			return p, true
		}
		if !v.healthy() {
			p.Phase, p.Blocked = PhaseHalted, true
			p.Message = fmt.Sprintf("upgrade to %s not started: unhealthy: %s", want, strings.Join(v.unhealth, ", "))
			return p, true
		}
		p.Version, p.Partition = want, set.Replicas-1
		p.Phase, p.Message = PhaseUpgrading, fmt.Sprintf("upgrading %s to %s", v.a.MemberName(p.Partition), want)
		return p, true
	}
	part := set.Partition
	if pod := set.pod(part); !pod.Updated || !pod.Ready || part == 0 {
		if others := without(unhealthyOrdinals(v), part); len(others) > 0 {
			p.Phase, p.Blocked = PhaseHalted, true
			p.Message = fmt.Sprintf("upgrade to %s halted at %s: unhealthy: %s", want, v.a.MemberName(part), strings.Join(v.unhealth, ", "))
			return p, true
		}
		p.Phase, p.Message = PhaseUpgrading, fmt.Sprintf("waiting for %s to run %s", v.a.MemberName(part), want)
		return p, true
	}
	if !v.healthy() {
		p.Phase, p.Blocked = PhaseHalted, true
		p.Message = fmt.Sprintf("upgrade to %s halted after %s: unhealthy: %s", want, v.a.MemberName(part), strings.Join(v.unhealth, ", "))
		return p, true
	}
	p.Partition = part - 1
	p.Phase, p.Message = PhaseUpgrading, fmt.Sprintf("upgrading %s to %s", v.a.MemberName(p.Partition), want)
	return p, true
}

// allUpdated: every existing Pod runs the update revision (Pods yet to be
// created will).
func unhealthyOrdinals(v view) []int {
	var out []int
	for _, i := range v.ords {
		if !v.memberHealthy(i) {
			out = append(out, i)
		}
	}
	return out
}

func allUpdated(s *Set) bool {
	for i := range s.Replicas {
		if pod := s.pod(i); pod.Exists && !pod.Updated {
			return false
		}
	}
	return true
}

// checkUpgradePath refuses what etcd does not support: skipping a minor
// version or going down one.
func checkUpgradePath(from, to string) error {
	fm, fok := minor(from)
	tm, tok := minor(to)
	if !fok || !tok {
		return fmt.Errorf("cannot compare versions %q and %q", from, to)
	}
	switch {
	case tm > fm+1:
		return fmt.Errorf("etcd upgrades one minor version at a time: %s -> %s skips %d", from, to, tm-fm-1)
	case tm < fm:
		return fmt.Errorf("downgrading etcd from %s to %s is not supported", from, to)
	}
	return nil
}

func minor(v string) (int, bool) {
	parts := strings.Split(v, ".")
	if len(parts) != 3 || parts[0] != "3" {
		return 0, false
	}
	var m int
	_, err := fmt.Sscanf(parts[1], "%d", &m)
	return m, err == nil
}
