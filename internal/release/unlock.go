package release

import (
	"context"
	"errors"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
)

// unlock marks a revision an interrupted operation left pending failed
// (the action of StateLocked), so that the next step remediates it.
type unlock struct{ unhooked }

func (unlock) kind() ActionKind { return ActionUnlock }

func (unlock) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	rel, err := s.e.helm.Unlock(ctx, s.d.ref.Name, s.d.ref.Namespace)
	if errors.Is(err, helm.ErrNotLocked) {
		return rel, nil // someone finished it meanwhile
	}
	return rel, err
}

// succeeded: status.release names the revision (rewritten in place, no
// new one), a Warning Event and an attempt Unlocked, Released False with
// the decision's reason (Pending).
func (u unlock) succeeded(s *step, out outcome) {
	s.st.Release = s.releaseStatus(u, out)
	done := s.dec.Message + "; marked failed so it can be remediated"
	s.eventf(true, api.ReasonUnlocked, "%s", done)
	s.attempted(u, out, api.AttemptSucceeded, api.ReasonUnlocked, done)
	s.releasedAsDecided()
}

// failed: not counted toward remediation, backed off (see backoff.go):
// Event and Released False UnlockFailed.
func (u unlock) failed(s *step, out outcome, err error) bool {
	s.recordRevision(u, out)
	return s.failure(u, out, err, api.ReasonUnlockFailed, false)
}
