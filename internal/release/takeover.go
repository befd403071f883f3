package release

import (
	"context"
	"fmt"

	helmrelease "helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// takeOver takes over a release a predecessor operator (helm-operator-plugins,
// operator-sdk's Helm operator) made for the resource: the action of
// StateInherited, chosen when the latest revision's storage Secret is
// owned by the resource and carries no chartkeeper label (owner.go,
// docs/release-engine.md, Ownership).
//
// Its latest revision is rewritten in place through the release storage
// (helm.Client.TakeOver): chartkeeper's labels are added (managed, the
// owner's UID and kind, and the desired digest when the stored chart and
// values are the desired ones: prove), its other labels kept, and the
// storage signs it. No revision is made, nothing is applied, no object is
// recreated and the history is kept. When the stored chart or values
// differ from the desired ones (the spec changed during the switch), the
// next step upgrades, as for any out-of-date revision of chartkeeper's.
// The older revisions stay as the predecessor wrote them: unsigned, never
// rollback targets (forgery.go's trustedTargets).
type takeOver struct{ unhooked }

func (takeOver) kind() ActionKind { return ActionTakeOver }

func (takeOver) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	rel, err := s.e.helm.Get(ctx, s.d.ref.Name, s.d.ref.Namespace, s.o.Latest.Version)
	if err != nil {
		return nil, fmt.Errorf("reading revision %d: %w", s.o.Latest.Version, err)
	}
	labels := s.ownerLabels()
	if p := prove(rel, s.t.Watch.Chart, s.d.values); p.verified {
		labels[api.LabelDigest] = s.d.digest
	} else {
		s.differs = p.differs
	}
	if err := s.e.helm.TakeOver(ctx, rel, labels); err != nil {
		return nil, err
	}
	return rel, nil
}

// succeeded: status.release names the revision taken over, an Event and an
// attempt TakenOver; Released True TakenOver when the revision holds the
// desired chart and values, else Released False with the decision's reason
// (an upgrade follows).
func (a takeOver) succeeded(s *step, out outcome) {
	s.st.Release = s.releaseStatus(a, out)
	done := fmt.Sprintf("took over revision %d of release %s/%s, made for this resource by another operator: labelled and signed in place, no new revision, nothing applied",
		out.after, s.d.ref.Namespace, s.d.ref.Name)
	inSync := out.digest == s.d.digest
	if !inSync {
		done += fmt.Sprintf("; its chart or values are not the desired ones (differs: %s): an upgrade follows", s.differs)
	}
	s.eventf(false, api.ReasonTakenOver, "%s", done)
	s.attempted(a, out, api.AttemptSucceeded, api.ReasonTakenOver, done)
	if inSync {
		s.setCondition(api.ConditionReleased, metav1.ConditionTrue, api.ReasonTakenOver, s.releasedMessage())
		return
	}
	s.releasedAsDecided()
}

// failed: not counted toward remediation (nothing was applied), backed off
// (backoff.go): Event and Released False TakeOverFailed.
func (a takeOver) failed(s *step, out outcome, err error) bool {
	return s.failure(a, out, err, api.ReasonTakeOverFailed, false)
}

// inheritedMessage is the message of StateInherited.
func inheritedMessage(version int) string {
	return fmt.Sprintf("revision %d was made for this resource by another operator (its storage Secret is owned by this resource and carries no chartkeeper label): taking it over in place", version)
}
