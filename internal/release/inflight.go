package release

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/metrics"
)

// remediationsInFlight remembers, per kind, the releases being remediated:
// from the remediation (a rollback, or an uninstall) until the release is
// in sync and ready again, gives up (Stalled), is suspended or deleted.
// Retries after the remediation keep its place. remediation.maxInFlight
// bounds how many of a kind a readiness timeout may add (Decide defers
// the rest); failures that are the revision's add theirs regardless.
//
// It is memory, not state: after a start it fills as the resources are
// stepped (each is, once, when the caches sync), so a remediation of the
// last process counts again when its resource is stepped and found
// rolled back and not ready.
type remediationsInFlight struct {
	mu     sync.Mutex
	byKind map[schema.GroupKind]map[Resource]struct{}
}

func newRemediationsInFlight() *remediationsInFlight {
	return &remediationsInFlight{byKind: map[schema.GroupKind]map[Resource]struct{}{}}
}

// others counts the remediations of r's kind in flight, r's aside, and
// says whether r holds one.
func (f *remediationsInFlight) others(r Resource) (n int, holds bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	set := f.byKind[r.GroupKind]
	_, holds = set[r]
	n = len(set)
	if holds {
		n--
	}
	return n, holds
}

// claim adds r unless max (> 0) others are in flight; true when r holds a
// place after it. Steps of one kind run concurrently: the count Decide saw
// may be stale by the time the step remediates.
func (f *remediationsInFlight) claim(r Resource, max int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	set := f.byKind[r.GroupKind]
	if _, ok := set[r]; ok {
		return true
	}
	if max > 0 && len(set) >= max {
		return false
	}
	if set == nil {
		set = map[Resource]struct{}{}
		f.byKind[r.GroupKind] = set
	}
	set[r] = struct{}{}
	metrics.SetRemediationsInFlight(r.GroupKind.String(), len(set))
	return true
}

// add adds r whatever the bound: a remediation that is the revision's,
// or one found after a start.
func (f *remediationsInFlight) add(r Resource) { f.claim(r, 0) }

func (f *remediationsInFlight) drop(r Resource) {
	f.mu.Lock()
	defer f.mu.Unlock()
	set := f.byKind[r.GroupKind]
	if _, ok := set[r]; !ok {
		return
	}
	delete(set, r)
	metrics.SetRemediationsInFlight(r.GroupKind.String(), len(set))
}

// timeoutRemediation: the decision remediates a readiness timeout, the
// one remediation maxInFlight bounds.
func timeoutRemediation(d Decision) bool {
	return d.Remediation && d.Action != ActionNone && d.Reason == api.ReasonReadinessTimeout
}

// decide decides the step, holding a timeout's remediation to the watch's
// remediation.maxInFlight: Decide sees how many are in flight; a
// remediation it chooses takes its place here, or, when a concurrent step
// of the kind took the last one first, Decide sees that and defers.
func (s *step) decide() Decision {
	r := resourceOf(s.obj)
	n, holds := s.e.remediating.others(r)
	s.o.RemediationsInFlight = n
	if holds { // its own remediation goes on: its place is not another's
		s.o.RemediationsInFlight = 0
	}
	d := Decide(s.o, s.t.Watch.Policy)
	// Bounded: a step that loses the race twice (places freed and taken
	// again between its looks) remediates, one over the bound at most.
	for i := 0; i < 2 && timeoutRemediation(d) && !s.e.remediating.claim(r, s.t.Watch.Policy.MaxInFlight); i++ {
		s.o.RemediationsInFlight, _ = s.e.remediating.others(r)
		d = Decide(s.o, s.t.Watch.Policy)
	}
	return d
}

// tracked updates whether the step's release is being remediated, after
// the step: a remediation run adds it (a failed one too: it is retried
// or given up, which ends it); in sync, given up, suspended or finished
// ends it. A release found rolled back and not ready is added too: after
// a start, that is how a remediation of the last process counts again.
func (s *step) tracked(res Result) {
	r := resourceOf(s.obj)
	switch {
	case res.Finished:
		s.e.remediating.drop(r)
	case s.dec.Remediation && res.Ran != ActionNone:
		s.e.remediating.add(r)
	case s.dec.State == StateInSync, s.dec.State == StateStalled, s.dec.State == StateSuspended, s.dec.State == StateDeleting:
		s.e.remediating.drop(r)
	case s.o.Latest != nil && s.o.Latest.IsRollback && !s.o.Ready:
		s.e.remediating.add(r)
	}
}
