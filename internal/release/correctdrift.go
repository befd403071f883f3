package release

import (
	"context"
	"fmt"

	helmrelease "helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// correctDrift restores the released objects found deleted or edited
// (Observation.Drift) by server-side apply of their released form, without
// a new revision (the action of StateDrifted).
type correctDrift struct{ unhooked }

func (correctDrift) kind() ActionKind { return ActionCorrectDrift }

func (correctDrift) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	fix := make([]object, 0, len(s.o.Drift))
	for _, d := range s.o.Drift {
		fix = append(fix, d.Object)
	}
	return nil, s.e.correct(ctx, releaseKey(s.d.ref), fix)
}

// succeeded: status.release records the correction (the correction keeps
// the baselines it took), Event and Released True DriftCorrected naming
// what was restored.
func (c correctDrift) succeeded(s *step, out outcome) {
	s.st.Release = s.releaseStatus(c, out)
	s.e.event(s.obj, false, api.ReasonDriftCorrected, "restored %v", s.o.Drift)
	s.setCondition(api.ConditionReleased, metav1.ConditionTrue, api.ReasonDriftCorrected, "restored "+fmt.Sprint(s.o.Drift))
}

// failed: not counted toward remediation, backed off (see backoff.go):
// Event and Released False DriftCorrectionFailed.
func (c correctDrift) failed(s *step, out outcome, err error) bool {
	s.st.Release = s.releaseStatus(c, out)
	return s.failure(c, out, err, api.ReasonDriftCorrectionFailed, false)
}

// correct restores drifted objects by server-side apply of their released
// form, creating the deleted ones. Each restored object's baseline is taken
// from the apply's own answer, so an edit made right after the correction
// is still seen as drift (a baseline read later could include it).
func (e *Engine) correct(ctx context.Context, key string, objs []object) error {
	for _, ob := range objs {
		u := ob.Desired.DeepCopy()
		u.SetResourceVersion("")
		u.SetManagedFields(nil)
		if err := e.live.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.ForceOwnership, client.FieldOwner(api.FieldManager)); err != nil {
			return fmt.Errorf("restoring %s: %w", ob, err)
		}
		m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Generation: u.GetGeneration(), ResourceVersion: u.GetResourceVersion()}}
		e.drift.baseline.set(key, u.GetUID(), marker(m))
	}
	return nil
}
