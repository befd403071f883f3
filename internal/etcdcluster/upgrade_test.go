package etcdcluster

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestUpgradeHaltsOnHealthFailure rolls a new version over a real 3-member
// cluster one Pod at a time. When a member that is not being upgraded
// fails, the partition stays where it is and the plan says why; once the
// member is back, the upgrade finishes.
func TestUpgradeHaltsOnHealthFailure(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.converge(ctx, Spec{Size: 3, Version: v1}, nil)
	putKeys(t, w.kv(t), "k", 20)

	const v2 = "3.7.0"
	up := Spec{Size: 3, Version: v2}
	// First step: the highest ordinal rolls alone.
	p := w.step(ctx, up)
	if p.Phase != PhaseUpgrading || p.Partition != 2 || p.Version != v2 {
		t.Fatalf("first upgrade step: %+v", p)
	}
	if w.podVer[0] != v1 || w.podVer[1] != v1 || w.podVer[2] != v2 {
		t.Fatalf("Pod versions after the first step: %v", w.podVer)
	}
	// Member 0 fails and stays down.
	w.down[0] = true
	_ = w.procs[0].Kill()
	var halted Plan
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		halted = w.step(ctx, up)
		if halted.Phase == PhaseHalted {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if halted.Phase != PhaseHalted || !halted.Blocked || !strings.Contains(halted.Message, "etcd-0") {
		t.Fatalf("upgrade did not halt on etcd-0's failure: %+v", halted)
	}
	for range 5 {
		p := w.step(ctx, up)
		if p.Partition != 2 || w.podVer[1] != v1 {
			t.Fatalf("upgrade went on while etcd-0 was down: %+v, Pods %v", p, w.podVer)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("halted: %s", halted.Message)

	// Recovery: the upgrade resumes and completes.
	w.down[0] = false
	w.converge(ctx, up, nil)
	for i := range 3 {
		if w.podVer[i] != v2 {
			t.Errorf("Pod %d runs %s after the upgrade", i, w.podVer[i])
		}
		if got := countKeys(t, w.addr.ClientURL(i), "k"); got != 20 {
			t.Errorf("member %d has %d of 20 keys", i, got)
		}
	}
}

// TestLostMemberIsReplaced loses one member's volume: the member is
// removed and added back with a new identity, and it catches up.
func TestLostMemberIsReplaced(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	spec := Spec{Size: 3, Version: v1}
	w.converge(ctx, spec, nil)
	putKeys(t, w.kv(t), "k", 30)
	o, c := w.observe(ctx, spec)
	c.Close()
	oldID := memberID(t, o, w.addr, 1)
	w.recorded = RecordVolumes(o, w.addr, w.recorded)

	w.loseVolume(1)
	replaced := false
	w.converge(ctx, spec, func(p Plan) {
		if p.Action.Kind == ActionRemove && p.Action.Ordinal == 1 {
			replaced = true
		}
	})
	if !replaced {
		t.Fatalf("member 1 was not removed after losing its volume; plans %+v", w.plans)
	}
	// Converged means all healthy; wait until the new member is listed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		o, c = w.observe(ctx, spec)
		c.Close()
		if p := Decide(o, w.addr); p.Phase == PhaseRunning && !strings.Contains(p.Message, "unhealthy") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster not healthy after replacement: %+v", Decide(o, w.addr))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if newID := memberID(t, o, w.addr, 1); newID == oldID {
		t.Fatalf("member 1 kept ID %x", oldID)
	}
	if got := countKeys(t, w.addr.ClientURL(1), "k"); got != 30 {
		t.Fatalf("replaced member has %d of 30 keys", got)
	}
}

func memberID(t *testing.T, o Observed, a Addressing, i int) uint64 {
	t.Helper()
	for _, m := range o.Members {
		if m.Name == a.MemberName(i) {
			return m.ID
		}
	}
	t.Fatalf("member %d not listed: %+v", i, o.Members)
	return 0
}
