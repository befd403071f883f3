package etcdcluster

import (
	"fmt"
	"slices"
	"strings"
)

// Phase names what the cluster is going through.
type Phase string

// Phases, as written to status.app.phase.
const (
	PhaseCreating  Phase = "Creating"
	PhaseRunning   Phase = "Running"
	PhaseScaling   Phase = "Scaling"
	PhaseUpgrading Phase = "Upgrading"
	PhaseReplacing Phase = "Replacing"
	// PhaseHalted: a change is stopped because the cluster is not healthy.
	PhaseHalted Phase = "Halted"
	// PhaseUnknown: etcd did not answer; nothing needs it yet.
	PhaseUnknown Phase = "Unknown"
)

// Spec is what the custom resource asks for.
type Spec struct {
	Size    int
	Version string
	// Restore seeds a new cluster from a snapshot: it starts with one
	// member, then grows to Size.
	Restore bool
}

// Pod is what the StatefulSet shows of one ordinal.
type Pod struct {
	Exists bool
	Ready  bool
	// Updated: the Pod runs the StatefulSet's update revision.
	Updated bool
	// Volume is the UID of the ordinal's PersistentVolumeClaim ("" if none).
	Volume string
}

// Set is the released StatefulSet as observed.
type Set struct {
	Replicas, Partition int
	// Version is the etcd version its Pod template runs.
	Version string
	// Pods by ordinal; shorter than Replicas when Pods are missing.
	Pods []Pod
}

func (s *Set) pod(i int) Pod {
	if i < len(s.Pods) {
		return s.Pods[i]
	}
	return Pod{}
}

// Observed is everything one decision rests on.
type Observed struct {
	Spec Spec
	// Set is nil before the first install.
	Set *Set
	// Members and Status come from etcd; Reach is why etcd did not answer.
	Members []Member
	Status  map[uint64]EndpointStatus
	Reach   error
	// Volumes are the claims members were first seen healthy on, by
	// member name (RecordVolumes): a different claim now means the volume
	// was lost.
	Volumes map[string]VolumeRecord
}

// ActionKind is the one membership change a plan makes.
type ActionKind string

// Actions.
const (
	ActionNone   ActionKind = ""
	ActionAdd    ActionKind = "AddMember"
	ActionRemove ActionKind = "RemoveMember"
)

// Action is a membership change, made through the etcd API before the
// StatefulSet is changed.
type Action struct {
	Kind    ActionKind
	Ordinal int
	// ID of the member to remove.
	ID uint64
	// DeleteVolume: the ordinal's old PVC (and its Pod, if any) must go
	// before it rejoins: its data belongs to a removed member.
	DeleteVolume bool
}

// Plan is what to render and do next.
type Plan struct {
	// Replicas, Partition and Version are rendered into the StatefulSet.
	Replicas, Partition int
	Version             string
	// Members are the ordinals in the etcd membership (the initial-cluster
	// list of a starting Pod); State is "new" only at bootstrap.
	Members []int
	State   string
	Action  Action
	Phase   Phase
	// Message says what is happening or what blocks.
	Message string
	// Blocked: the spec asks for a change that cannot be made now and will
	// not be made without intervention or recovery; reported as an error.
	Blocked bool
}

// Done: nothing is in progress.
func (p Plan) Done() bool { return p.Phase == PhaseRunning || p.Phase == PhaseUnknown }

// view is the observation indexed by ordinal.
type view struct {
	o        Observed
	a        Addressing
	byOrd    map[int]Member
	ords     []int // member ordinals, ascending
	foreign  []Member
	leader   uint64
	unhealth []string // names of members that are not healthy
}

func newView(o Observed, a Addressing) view {
	v := view{o: o, a: a, byOrd: map[int]Member{}}
	limit := max(o.Spec.Size, o.Set.Replicas) + 8
	for _, m := range o.Members {
		i := ordinalOf(a, m, limit)
		if i < 0 {
			v.foreign = append(v.foreign, m)
			continue
		}
		v.byOrd[i] = m
		v.ords = append(v.ords, i)
	}
	slices.Sort(v.ords)
	for _, i := range v.ords {
		m := v.byOrd[i]
		st, ok := o.Status[m.ID]
		if ok && st.Leader != 0 && v.leader == 0 {
			v.leader = st.Leader
		}
		if !m.Started() || !ok || !st.Healthy() {
			v.unhealth = append(v.unhealth, a.MemberName(i))
		}
	}
	return v
}

func (v view) healthy() bool { return len(v.unhealth) == 0 && v.leader != 0 }

func (v view) memberHealthy(i int) bool {
	m, ok := v.byOrd[i]
	if !ok || !m.Started() {
		return false
	}
	st, ok := v.o.Status[m.ID]
	return ok && st.Healthy()
}

// Decide computes the next plan from an observation. It changes at most
// one member per call and moves the StatefulSet only after etcd agrees:
// a member is added before its Pod is created and removed before its Pod
// is deleted; an upgrade lowers the partition one Pod at a time and only
// while every member is healthy.
func Decide(o Observed, a Addressing) Plan {
	if o.Set == nil {
		n := o.Spec.Size
		if o.Spec.Restore {
			n = 1
		}
		return Plan{Replicas: n, Version: o.Spec.Version, Members: upTo(n), State: "new", Phase: PhaseCreating,
			Message: fmt.Sprintf("bootstrapping %d member(s)", n)}
	}
	set := o.Set
	hold := Hold(o, a)
	if o.Reach != nil {
		if want := pending(o); want != "" {
			hold.Phase, hold.Blocked = PhaseHalted, true
			hold.Message = fmt.Sprintf("%s needs the etcd API, which does not answer: %v", want, o.Reach)
			return hold
		}
		hold.Phase, hold.Message = PhaseUnknown, fmt.Sprintf("etcd does not answer: %v", o.Reach)
		return hold
	}
	v := newView(o, a)
	if v.leader == 0 || len(v.ords) == 0 {
		hold.Phase, hold.Blocked = PhaseHalted, true
		hold.Message = "no member sees a leader: the cluster has lost quorum"
		return hold
	}
	// Replicas follow membership: a member added or removed by a step
	// whose render did not happen yet gets its Pod started or stopped.
	if top := v.ords[len(v.ords)-1] + 1; top != set.Replicas {
		hold.Replicas, hold.Phase = top, PhaseScaling
		hold.Message = fmt.Sprintf("moving the StatefulSet to the membership: %d -> %d Pods", set.Replicas, top)
		return hold
	}
	for _, step := range []func(view, Plan) (Plan, bool){replaceLost, fillHole, upgrade, scale} {
		if p, ok := step(v, hold); ok {
			return p
		}
	}
	hold.Phase, hold.Message = PhaseRunning, fmt.Sprintf("%d member(s) healthy at %s", len(v.ords), set.Version)
	if !v.healthy() {
		hold.Message = "unhealthy: " + strings.Join(v.unhealth, ", ")
	}
	return hold
}

// Hold is the plan that renders the StatefulSet as it is: for a step
// that must not change it.
func Hold(o Observed, a Addressing) Plan {
	if o.Set == nil {
		return Decide(o, a)
	}
	p := Plan{Replicas: o.Set.Replicas, Partition: o.Set.Partition, Version: o.Set.Version, Members: upTo(o.Set.Replicas), State: "new"}
	if o.Reach == nil && len(o.Members) > 0 {
		p.Members = newView(o, a).ords
	}
	// A starting Pod bootstraps (or restores) until a member was seen
	// running; from then on Pods join the existing cluster.
	if len(o.Volumes) > 0 || startedMember(o) {
		p.State = "existing"
	}
	return p
}

func startedMember(o Observed) bool {
	if o.Reach != nil {
		return false
	}
	for _, m := range o.Members {
		if m.Started() {
			return true
		}
	}
	return false
}

// pending names the change the spec asks for that needs etcd, or "".
func pending(o Observed) string {
	switch {
	case o.Spec.Size != o.Set.Replicas:
		return fmt.Sprintf("scaling from %d to %d members", o.Set.Replicas, o.Spec.Size)
	case o.Spec.Version != o.Set.Version || o.Set.Partition > 0:
		return fmt.Sprintf("upgrading from %s to %s", o.Set.Version, o.Spec.Version)
	}
	return ""
}

// replaceLost removes a member whose volume is gone and that is not
// healthy; fillHole then adds it back with a fresh identity.
func replaceLost(v view, p Plan) (Plan, bool) {
	for _, i := range v.ords {
		m := v.byOrd[i]
		if !v.volumeLost(i) || v.memberHealthy(i) {
			continue
		}
		p.Action = Action{Kind: ActionRemove, Ordinal: i, ID: m.ID}
		p.Members = without(p.Members, i)
		p.Phase, p.Message = PhaseReplacing, fmt.Sprintf("member %s lost its volume: removing it to add it back empty", v.a.MemberName(i))
		return p, true
	}
	return p, false
}

// fillHole adds back a member for an ordinal below the highest member
// (a highest member that was removed is re-added by scale).
func fillHole(v view, p Plan) (Plan, bool) {
	for i := range v.ords[len(v.ords)-1] {
		if _, ok := v.byOrd[i]; ok {
			continue
		}
		if !v.healthy() {
			p.Phase, p.Message = PhaseReplacing, fmt.Sprintf("member %s waits to be added back until the others are healthy (%s)", v.a.MemberName(i), strings.Join(v.unhealth, ", "))
			return p, true
		}
		// Its volume goes too: a Pod that crashed on it while the old
		// member was still listed may have written the old identity there.
		p.Action = Action{Kind: ActionAdd, Ordinal: i, DeleteVolume: true}
		p.Members = insert(p.Members, i)
		p.Phase, p.Message = PhaseReplacing, fmt.Sprintf("adding member %s back with an empty volume", v.a.MemberName(i))
		return p, true
	}
	return p, false
}

// scale adds or removes one member, only while all are healthy.
func scale(v view, p Plan) (Plan, bool) {
	n, want := len(v.ords), v.o.Spec.Size
	if n == want {
		return p, false
	}
	if !v.healthy() {
		p.Phase, p.Message = PhaseScaling, fmt.Sprintf("scaling %d -> %d waits for healthy members: %s", n, want, strings.Join(v.unhealth, ", "))
		return p, true
	}
	if n < want {
		i := v.ords[n-1] + 1
		p.Action = Action{Kind: ActionAdd, Ordinal: i, DeleteVolume: v.o.Set.pod(i).Volume != ""}
		p.Members = insert(p.Members, i)
		p.Replicas = i + 1
		p.Phase, p.Message = PhaseScaling, fmt.Sprintf("scaling %d -> %d: adding %s", n, want, v.a.MemberName(i))
		return p, true
	}
	i := v.ords[n-1]
	p.Action = Action{Kind: ActionRemove, Ordinal: i, ID: v.byOrd[i].ID}
	p.Members = without(p.Members, i)
	p.Replicas = i
	p.Phase, p.Message = PhaseScaling, fmt.Sprintf("scaling %d -> %d: removing %s", n, want, v.a.MemberName(i))
	return p, true
}

func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func insert(s []int, i int) []int {
	if slices.Contains(s, i) {
		return s
	}
	out := append(slices.Clone(s), i)
	slices.Sort(out)
	return out
}

func without(s []int, i int) []int {
	return slices.DeleteFunc(slices.Clone(s), func(x int) bool { return x == i })
}
