package release

import (
	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/values"
)

// attempted records what an action did as the newest entry of
// status.history (docs/status-history.md): each action's success and
// failure bookkeeping calls it once, with the reason its Released
// condition says and the message its Event says. Secret values are
// redacted from the message, which is cut to api.MaxAttemptMessage bytes.
//
// Install and Upgrade apply the desired chart and values (both digests
// are theirs; the revision is the one they stored, 0 when nothing was);
// Rollback makes a new revision from an older one's chart and values;
// the others act on the latest revision as it is.
func (s *step) attempted(a action, out outcome, result api.AttemptResult, reason api.Reason, msg string) {
	at := api.Attempt{Action: string(a.kind()), StartedAt: out.began, FinishedAt: out.now, Result: result, Reason: reason,
		Message: shorten(s.d.redact.Redact(msg), api.MaxAttemptMessage, "…")}
	switch a.kind() {
	case ActionInstall, ActionUpgrade, ActionRollback:
		if out.changed() {
			at.Revision = out.after
		}
	default:
		at.Revision = out.before
	}
	// The chart of the revision, as status.release describes it after the
	// action (or before it, for an uninstall).
	for _, rs := range []*api.ReleaseStatus{s.st.Release, out.prior} {
		if rs != nil && at.Revision != 0 && rs.Revision == at.Revision {
			at.Chart, at.ChartVersion, at.Digest = rs.Chart, rs.Version, rs.Digest
			break
		}
	}
	if k := a.kind(); k == ActionInstall || k == ActionUpgrade {
		md := s.t.Watch.Chart.Metadata
		at.Chart, at.ChartVersion, at.Digest = md.Name, md.Version, s.d.digest
		at.ValuesDigest, _ = values.Digest("", s.d.values) // the values alone
	}
	s.st.History = pushAttempt(s.st.History, at)
}

// pushAttempt returns history with at as its newest entry, keeping the
// api.MaxHistory newest.
func pushAttempt(history []api.Attempt, at api.Attempt) []api.Attempt {
	out := make([]api.Attempt, 0, min(len(history)+1, api.MaxHistory))
	out = append(out, at)
	return append(out, history[:min(len(history), api.MaxHistory-1)]...)
}

// unreadyInTime marks the attempt that made revision failed once its
// objects were not ready within the readiness timeout (a counted failure:
// Decision.CountFailure), with the decision's reason and message.
func (s *step) unreadyInTime(revision int) {
	for i := range s.st.History {
		at := &s.st.History[i]
		if k := ActionKind(at.Action); at.Revision != revision || k != ActionInstall && k != ActionUpgrade && k != ActionRollback {
			continue
		}
		if at.Result == api.AttemptSucceeded {
			at.Result, at.Reason = api.AttemptFailed, s.dec.Reason
			at.Message = shorten(s.d.redact.Redact(s.dec.Message), api.MaxAttemptMessage, "…")
		}
		return
	}
}
