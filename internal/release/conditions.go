package release

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// setCondition writes one condition of the step's resource, for its
// generation: the one place a condition is built.
func (s *step) setCondition(typ string, status metav1.ConditionStatus, reason api.Reason, msg string) {
	meta.SetStatusCondition(&s.st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: string(reason),
		Message: trim(s.d.redact.Redact(msg)), ObservedGeneration: s.obj.GetGeneration()})
}

func (s *step) dropCondition(typ string) { meta.RemoveStatusCondition(&s.st.Conditions, typ) }

// verdict is what Ready, Reconciling and Stalled say.
type verdict struct {
	// ready: Ready True; stalled: nothing more is done until the spec or
	// chart changes; otherwise work is under way (Reconciling).
	ready, stalled bool
	// suspended: Ready False, and neither Reconciling nor Stalled (no
	// work is under way, and it is not stuck: a person paused it).
	suspended bool
	reason    api.Reason
	message   string
}

// setReadiness writes Ready, Reconciling and Stalled, and observedGeneration:
// the only function that writes these three. Ready has positive polarity;
// Stalled (nothing can be done until the spec or chart changes) and
// Reconciling (work under way) follow kstatus, present only while they
// hold, with Ready's reason and message.
func (s *step) setReadiness(v verdict) {
	s.st.ObservedGeneration = s.obj.GetGeneration()
	if v.ready {
		s.setCondition(api.ConditionReady, metav1.ConditionTrue, v.reason, v.message)
		s.dropCondition(api.ConditionStalled)
		s.dropCondition(api.ConditionReconciling)
		return
	}
	s.setCondition(api.ConditionReady, metav1.ConditionFalse, v.reason, v.message)
	if v.suspended {
		s.dropCondition(api.ConditionStalled)
		s.dropCondition(api.ConditionReconciling)
		return
	}
	if v.stalled {
		s.setCondition(api.ConditionStalled, metav1.ConditionTrue, v.reason, v.message)
		s.dropCondition(api.ConditionReconciling)
		return
	}
	s.dropCondition(api.ConditionStalled)
	s.setCondition(api.ConditionReconciling, metav1.ConditionTrue, v.reason, v.message)
}

// summarize writes the step's conditions once it is done. An action wrote
// Released (and Remediated) itself; without one, Released describes the
// observed state. Ready is computed from what was observed: True only when
// this step found the release InSync (deployed from the desired digest, no
// drift, every object Current, its tests passed when the watch runs them)
// and ran no action; then the failure count is cleared.
func (s *step) summarize(res Result) {
	st, d, o := s.st, s.dec, s.o
	if res.Ran == ActionNone {
		if o.Latest != nil && (st.Release == nil || st.Release.Revision != o.Latest.Version) {
			// Changed outside chartkeeper (or status lost): describe what is there.
			st.Release = &api.ReleaseStatus{Name: s.d.ref.Name, Namespace: s.d.ref.Namespace, Revision: o.Latest.Version, Digest: o.Latest.Digest}
		}
		switch {
		case d.State == StateSuspended:
			// Released keeps what it said: nothing was looked at or changed.
		case d.State == StateInSync || d.State == StateUnready || d.State == StateUntested:
			// Released True as the last action left it (InstallSucceeded, say)
			// stays: rewriting its reason to Succeeded was a status write per
			// action for nothing new.
			if c := meta.FindStatusCondition(s.st.Conditions, api.ConditionReleased); c == nil || c.Status != metav1.ConditionTrue ||
				c.ObservedGeneration != s.obj.GetGeneration() || c.Message != s.releasedMessage() {
				s.setCondition(api.ConditionReleased, metav1.ConditionTrue, api.ReasonSucceeded, s.releasedMessage())
			}
		default:
			s.releasedAsDecided()
		}
	}
	s.setDrifted(res)
	s.settlePlan()
	s.testsOff()
	v := s.verdict(res)
	if v.ready {
		s.failuresCleared() // released, ready and tested: the attempts are over
	}
	s.setReadiness(v)
}

// verdict judges the step for Ready, Reconciling and Stalled.
func (s *step) verdict(res Result) verdict {
	d := s.dec
	terminal := res.ActionErr != nil && s.st.TerminalDigest == s.d.digest && s.st.TerminalError != ""
	switch {
	case res.Ran == ActionNone && d.State == StateInSync && !d.BackingOff:
		return verdict{ready: true, reason: api.ReasonSucceeded, message: d.Message}
	case d.State == StateSuspended || d.State == StateAwaitingApproval && res.ActionErr == nil:
		// Nothing under way, nothing stuck: a person is to act.
		return verdict{suspended: true, reason: d.Reason, message: d.Message}
	case d.State == StateAwaitingApproval:
		return verdict{reason: api.ReasonPlanFailed, message: fmt.Sprintf("computing the plan failed: %v", res.ActionErr)}
	case d.State == StateStalled || terminal:
		v := verdict{stalled: true, reason: d.Reason, message: d.Message}
		if res.ActionErr != nil {
			v.reason, v.message = api.ReasonChartError, res.ActionErr.Error()
			if r := terminalReason(s.st); r != "" {
				v.reason = r
			}
		}
		return v
	case res.ActionErr != nil && backoffOf(s.st).Reason != "":
		// Failed for a cause outside the chart (dependencyMissing): say what is missing.
		return verdict{reason: backoffOf(s.st).Reason, message: fmt.Sprintf("%s failed: %v", res.Ran, res.ActionErr)}
	case res.Ran != ActionNone:
		return verdict{reason: api.ReasonProgressing, message: fmt.Sprintf("%s done; waiting for the result", res.Ran)}
	}
	return verdict{reason: d.Reason, message: d.Message}
}

// releasedAsDecided sets Released False with the decision's reason and message.
func (s *step) releasedAsDecided() {
	s.setCondition(api.ConditionReleased, metav1.ConditionFalse, s.dec.Reason, s.dec.Message)
}

func (s *step) releasedMessage() string {
	md := s.t.Watch.Chart.Metadata
	rev := 0
	if s.st.Release != nil {
		rev = s.st.Release.Revision
	}
	return fmt.Sprintf("revision %d of chart %s-%s released from the desired values", rev, md.Name, md.Version)
}

// trim bounds a condition message (see maxMessage).
func trim(s string) string { return shorten(s, maxMessage, "...") }
