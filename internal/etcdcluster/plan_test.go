package etcdcluster

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// cluster3 is a healthy 3-member cluster at v1 with member i's ID i+1.
func cluster3(a Addressing) ([]Member, map[uint64]EndpointStatus) {
	var ms []Member
	st := map[uint64]EndpointStatus{}
	for i := range 3 {
		id := uint64(i + 1)
		ms = append(ms, Member{ID: id, Name: a.MemberName(i), PeerURLs: []string{a.PeerURL(i)}, ClientURLs: []string{a.ClientURL(i)}})
		st[id] = EndpointStatus{MemberID: id, Leader: 1, Version: v1}
	}
	return ms, st
}

func set3() *Set {
	pods := make([]Pod, 3)
	for i := range pods {
		pods[i] = Pod{Exists: true, Ready: true, Updated: true, Volume: "v"}
	}
	return &Set{Replicas: 3, Version: v1, Pods: pods}
}

func TestDecide(t *testing.T) {
	a := PodDNS{Name: "e", Namespace: "ns"}
	ms, st := cluster3(a)
	unhealthy := func(id uint64) map[uint64]EndpointStatus {
		out := map[uint64]EndpointStatus{}
		for k, v := range st {
			out[k] = v
		}
		out[id] = EndpointStatus{Err: errors.New("connection refused")}
		return out
	}
	cases := []struct {
		name    string
		o       Observed
		phase   Phase
		blocked bool
		action  ActionKind
		check   func(t *testing.T, p Plan)
	}{
		{name: "bootstrap", o: Observed{Spec: Spec{Size: 3, Version: v1}}, phase: PhaseCreating, check: func(t *testing.T, p Plan) {
			if p.Replicas != 3 || p.State != "new" || len(p.Members) != 3 {
				t.Errorf("%+v", p)
			}
		}},
		{name: "restore starts one member", o: Observed{Spec: Spec{Size: 3, Version: v1, Restore: true}}, phase: PhaseCreating, check: func(t *testing.T, p Plan) {
			if p.Replicas != 1 || len(p.Members) != 1 {
				t.Errorf("%+v", p)
			}
		}},
		{name: "in sync", o: Observed{Spec: Spec{Size: 3, Version: v1}, Set: set3(), Members: ms, Status: st}, phase: PhaseRunning, check: func(t *testing.T, p Plan) {
			if p.State != "existing" || p.Replicas != 3 {
				t.Errorf("%+v", p)
			}
		}},
		{name: "unreachable, nothing pending", o: Observed{Spec: Spec{Size: 3, Version: v1}, Set: set3(), Reach: errors.New("dial")}, phase: PhaseUnknown, check: func(t *testing.T, p Plan) {
			if p.State != "new" {
				t.Errorf("never seen running: state %q, want new", p.State)
			}
		}},
		{name: "unreachable, scale pending", o: Observed{Spec: Spec{Size: 5, Version: v1}, Set: set3(), Reach: errors.New("dial")}, phase: PhaseHalted, blocked: true},
		{name: "no leader", o: Observed{Spec: Spec{Size: 3, Version: v1}, Set: set3(), Members: ms, Status: map[uint64]EndpointStatus{}}, phase: PhaseHalted, blocked: true},
		{name: "scale up adds the next ordinal", o: Observed{Spec: Spec{Size: 5, Version: v1}, Set: set3(), Members: ms, Status: st}, phase: PhaseScaling, action: ActionAdd, check: func(t *testing.T, p Plan) {
			if p.Action.Ordinal != 3 || p.Replicas != 4 || len(p.Members) != 4 {
				t.Errorf("%+v", p)
			}
		}},
		{name: "scale up waits for health", o: Observed{Spec: Spec{Size: 5, Version: v1}, Set: set3(), Members: ms, Status: unhealthy(2)}, phase: PhaseScaling, check: func(t *testing.T, p Plan) {
			if p.Replicas != 3 || !strings.Contains(p.Message, "e-1") {
				t.Errorf("%+v", p)
			}
		}},
		{name: "scale down removes the highest", o: Observed{Spec: Spec{Size: 1, Version: v1}, Set: set3(), Members: ms, Status: st}, phase: PhaseScaling, action: ActionRemove, check: func(t *testing.T, p Plan) {
			if p.Action.ID != 3 || p.Replicas != 2 {
				t.Errorf("%+v", p)
			}
		}},
		{name: "added member gets its Pod", o: func() Observed {
			m := append(ms, Member{ID: 9, PeerURLs: []string{a.PeerURL(3)}})
			return Observed{Spec: Spec{Size: 5, Version: v1}, Set: set3(), Members: m, Status: st}
		}(), phase: PhaseScaling, check: func(t *testing.T, p Plan) {
			if p.Replicas != 4 || p.Action.Kind != ActionNone {
				t.Errorf("%+v", p)
			}
		}},
		{name: "upgrade starts at the highest ordinal", o: Observed{Spec: Spec{Size: 3, Version: "3.7.0"}, Set: set3(), Members: ms, Status: st}, phase: PhaseUpgrading, check: func(t *testing.T, p Plan) {
			if p.Partition != 2 || p.Version != "3.7.0" {
				t.Errorf("%+v", p)
			}
		}},
		{name: "upgrade skipping a minor is refused", o: Observed{Spec: Spec{Size: 3, Version: "3.8.0"}, Set: set3(), Members: ms, Status: st}, phase: PhaseHalted, blocked: true},
		{name: "downgrade is refused", o: Observed{Spec: Spec{Size: 3, Version: "3.5.9"}, Set: set3(), Members: ms, Status: st}, phase: PhaseHalted, blocked: true},
		{name: "upgrade does not start unhealthy", o: Observed{Spec: Spec{Size: 3, Version: "3.7.0"}, Set: set3(), Members: ms, Status: unhealthy(1)}, phase: PhaseHalted, blocked: true},
		{name: "lost volume removes the member", o: func() Observed {
			s := set3()
			s.Pods[1].Volume = "new"
			return Observed{Spec: Spec{Size: 3, Version: v1}, Set: s, Members: ms, Status: unhealthy(2), Volumes: map[string]VolumeRecord{"e-0": {"1", "v"}, "e-1": {"2", "v"}, "e-2": {"3", "v"}}}
		}(), phase: PhaseReplacing, action: ActionRemove, check: func(t *testing.T, p Plan) {
			if p.Action.ID != 2 {
				t.Errorf("%+v", p)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Decide(tc.o, a)
			if p.Phase != tc.phase || p.Blocked != tc.blocked || p.Action.Kind != tc.action {
				t.Fatalf("phase %s blocked %v action %q, want %s %v %q: %s", p.Phase, p.Blocked, p.Action.Kind, tc.phase, tc.blocked, tc.action, p.Message)
			}
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

func TestSpecFrom(t *testing.T) {
	bad := []struct {
		vals map[string]any
		msg  string
	}{
		{map[string]any{"size": 0}, "spec.size"},
		{map[string]any{"size": 3, "backup": map[string]any{"s3": map[string]any{"bucket": "b"}}}, "missing endpoint"},
		{map[string]any{"size": 3, "backup": map[string]any{"schedule": "sometimes", "s3": map[string]any{"endpoint": "h:9000", "bucket": "bkt"}}}, "schedule"},
		{map[string]any{"size": 3, "restore": map[string]any{"backup": "k"}}, "restore.s3 is not set"},
		{map[string]any{"size": 3, "backup": map[string]any{"s3": map[string]any{"endpoint": "http://h", "bucket": "bkt"}}}, "without a scheme"},
	}
	for _, b := range bad {
		if _, err := specFrom(b.vals); err == nil || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("%v: error %v, want one containing %q", b.vals, err, b.msg)
		}
	}
	s, err := specFrom(map[string]any{"size": int64(3), "version": v1, "restore": map[string]any{"backup": "k"},
		"backup": map[string]any{"s3": map[string]any{"endpoint": "h:9000", "bucket": "bkt"}}})
	if err != nil || s.Size != 3 || s.Restore.Backup != "k" {
		t.Fatalf("%+v %v", s, err)
	}
	if cfg, _ := s.restoreStore(); cfg.Bucket != "bkt" {
		t.Fatalf("restore store defaults to backup.s3: %+v", cfg)
	}
}

// A member's record does not follow a new claim while its ID stays (the old
// process may still answer after its claim was replaced); a new ID is
// recorded once healthy; removed members are dropped.
func TestRecordVolumes(t *testing.T) {
	a := PodDNS{Name: "e", Namespace: "ns"}
	ms, st := cluster3(a)
	s := set3()
	s.Pods[1].Volume = "replaced"
	prev := map[string]VolumeRecord{"e-0": {"1", "v"}, "e-1": {"2", "v"}, "e-3": {"9", "v"}}
	got := RecordVolumes(Observed{Spec: Spec{Size: 3, Version: v1}, Set: s, Members: ms, Status: st}, a, prev)
	want := map[string]VolumeRecord{"e-0": {"1", "v"}, "e-1": {"2", "v"}, "e-2": {"3", "v"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// Member 1 re-added under a new ID, healthy on the new claim.
	ms[1].ID = 7
	st[7] = EndpointStatus{MemberID: 7, Leader: 1}
	got = RecordVolumes(Observed{Spec: Spec{Size: 3, Version: v1}, Set: s, Members: ms, Status: st}, a, got)
	if got["e-1"] != (VolumeRecord{"7", "replaced"}) {
		t.Fatalf("re-added member: %v", got["e-1"])
	}
}
