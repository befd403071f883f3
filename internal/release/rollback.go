package release

import (
	"context"
	"fmt"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// rollback rolls the release back to its last deployed revision, as a new
// revision: the remediation of a failed upgrade (or of one not ready in
// time). A rollback is never rolled back itself (see Decide).
type rollback struct {
	unhooked
	to int
}

func (rollback) kind() ActionKind { return ActionRollback }

func (r rollback) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	g := s.guard(ctx, admitScope(s.t.Watch.Scope, s.d.ref.Namespace))
	g.Force = s.steer.rollbackForce
	return nil, s.e.helm.Rollback(ctx, s.d.ref.Name, s.d.ref.Namespace, r.to, s.t.Watch.Policy.MaxHistory, g)
}

// succeeded: status.release names the new revision, Event and attempt
// RollbackSucceeded, Released False with the decision's reason (the
// desired values are not released), Remediated True RollbackSucceeded.
func (r rollback) succeeded(s *step, out outcome) {
	r.record(s, out)
	s.e.drift.tookWrites(releaseKey(s.d.ref), s.writes)
	done := fmt.Sprintf("rolled back to revision %d (now revision %d): %s", r.to, out.after, s.dec.Message)
	s.eventf(false, api.ReasonRollbackSucceeded, "%s", done)
	s.attempted(r, out, api.AttemptSucceeded, api.ReasonRollbackSucceeded, done)
	s.remediated(api.ReasonRollbackSucceeded, fmt.Sprintf("rolled back to revision %d", r.to))
}

// failed: a failed rollback counts toward remediation: Event and Released
// False RollbackFailed.
func (r rollback) failed(s *step, out outcome, err error) bool {
	r.record(s, out)
	return s.failure(r, out, err, api.ReasonRollbackFailed, true)
}

// record describes a rollback's revision in status.release: the chart it
// was made from is the one status.release named before, not the watch's.
func (r rollback) record(s *step, out outcome) {
	prev := s.st.Release
	s.recordRevision(r, out)
	if rs := s.st.Release; out.changed() && rs != nil && prev != nil {
		rs.Chart, rs.Version, rs.AppVersion = prev.Chart, prev.Version, prev.AppVersion
	}
}
