package release

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// summarize writes the step's conditions and observedGeneration. Ready is
// computed from what was observed: True only when this step found the
// release InSync (deployed from the desired digest, no drift, every object
// Current) and ran no action.
func (s *step) summarize(res Result) {
	st, d, o := s.st, s.dec, s.o
	gen := s.obj.GetGeneration()
	st.ObservedGeneration = gen
	set := func(typ string, status metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: trim(msg), ObservedGeneration: gen})
	}
	drop := func(typ string) { meta.RemoveStatusCondition(&st.Conditions, typ) }

	if res.Ran == ActionNone && o.Latest != nil && (st.Release == nil || st.Release.Revision != o.Latest.Version) {
		// Changed outside chartkeeper (or status lost): describe what is there.
		st.Release = &api.ReleaseStatus{Name: s.d.ref.Name, Namespace: s.d.ref.Namespace, Revision: o.Latest.Version, Digest: o.Latest.Digest}
	}

	stalled := d.State == StateStalled
	switch {
	case res.Ran != ActionNone && res.ActionErr != nil:
		reason := string(res.Ran) + "Failed"
		if st.TerminalDigest == s.d.digest && st.TerminalError != "" {
			reason, stalled = api.ReasonChartError, true
		}
		set(api.ConditionReleased, metav1.ConditionFalse, reason, fmt.Sprintf("%s failed: %v", res.Ran, res.ActionErr))
	case res.Ran == ActionInstall || res.Ran == ActionUpgrade:
		set(api.ConditionReleased, metav1.ConditionTrue, string(res.Ran)+"Succeeded", s.releasedMessage())
		drop(api.ConditionRemediated)
	case res.Ran == ActionCorrectDrift:
		set(api.ConditionReleased, metav1.ConditionTrue, api.ReasonDriftCorrected, "restored "+fmt.Sprint(o.Drift))
	case res.Ran == ActionPrune:
		set(api.ConditionReleased, metav1.ConditionTrue, api.ReasonPruned, "deleted what earlier revisions left: "+listObjects(o.Leftovers, 5))
	case res.Ran == ActionRollback || (res.Ran == ActionUninstall && d.Remediation):
		set(api.ConditionReleased, metav1.ConditionFalse, d.Reason, d.Message)
		verb := "uninstalled"
		reason := api.ReasonUninstallSucceeded
		if res.Ran == ActionRollback {
			verb, reason = fmt.Sprintf("rolled back to revision %d", d.RollbackTo), api.ReasonRollbackSucceeded
		}
		set(api.ConditionRemediated, metav1.ConditionTrue, reason, fmt.Sprintf("%s after: %s", verb, d.Message))
	case res.Ran != ActionNone:
		set(api.ConditionReleased, metav1.ConditionFalse, d.Reason, d.Message)
	case d.State == StateInSync || d.State == StateUnready || (d.State == StateDrifted && !s.t.Watch.Policy.CorrectDrift):
		set(api.ConditionReleased, metav1.ConditionTrue, api.ReasonSucceeded, s.releasedMessage())
	default:
		set(api.ConditionReleased, metav1.ConditionFalse, d.Reason, d.Message)
	}

	ready := res.Ran == ActionNone && d.State == StateInSync
	switch {
	case ready:
		set(api.ConditionReady, metav1.ConditionTrue, api.ReasonSucceeded, d.Message)
	case stalled:
		reason := d.Reason
		if res.ActionErr != nil {
			reason = api.ReasonChartError
		}
		set(api.ConditionReady, metav1.ConditionFalse, reason, firstNonEmpty(errString(res.ActionErr), d.Message))
	case res.Ran != ActionNone:
		set(api.ConditionReady, metav1.ConditionFalse, api.ReasonProgressing, fmt.Sprintf("%s done; waiting for the result", res.Ran))
	default:
		set(api.ConditionReady, metav1.ConditionFalse, firstNonEmpty(d.Reason, api.ReasonNotReady), d.Message)
	}
	if stalled {
		set(api.ConditionStalled, metav1.ConditionTrue, meta.FindStatusCondition(st.Conditions, api.ConditionReady).Reason,
			meta.FindStatusCondition(st.Conditions, api.ConditionReady).Message)
		drop(api.ConditionReconciling)
	} else {
		drop(api.ConditionStalled)
		if ready {
			drop(api.ConditionReconciling)
		} else {
			c := meta.FindStatusCondition(st.Conditions, api.ConditionReady)
			set(api.ConditionReconciling, metav1.ConditionTrue, c.Reason, c.Message)
		}
	}
}

func (s *step) releasedMessage() string {
	md := s.t.Watch.Chart.Metadata
	rev := 0
	if s.st.Release != nil {
		rev = s.st.Release.Revision
	}
	return fmt.Sprintf("revision %d of chart %s-%s released from the desired values", rev, md.Name, md.Version)
}

// maxMessage keeps condition messages readable (the API allows 32 KiB).
const maxMessage = 1024

func trim(s string) string {
	if len(s) > maxMessage {
		return s[:maxMessage-3] + "..."
	}
	return s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
