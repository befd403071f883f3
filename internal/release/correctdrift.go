package release

import (
	"context"
	"encoding/json"
	"fmt"

	helmrelease "helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// correctDrift restores the released objects found deleted or edited
// (Observation.Drift) without a new revision (the action of StateDrifted):
// a deleted object is re-created whole (server-side apply of its released
// form); an edited one gets only its drifted fields patched back, so the
// fields drift.ignore names (and those the chart does not set) are neither
// reset nor taken over.
type correctDrift struct{ unhooked }

func (correctDrift) kind() ActionKind { return ActionCorrectDrift }

func (correctDrift) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	objs := make([]object, len(s.o.Drift))
	for i, d := range s.o.Drift {
		objs[i] = d.Object
	}
	if err := s.admitStored(objs); err != nil { // a stored revision names them
		return nil, err
	}
	return nil, s.e.correct(ctx, releaseKey(s.d.ref), s.o.Drift)
}

// succeeded: status.release records the correction (the correction keeps
// the baselines it took), Event, attempt and Released True DriftCorrected
// naming what was restored.
func (c correctDrift) succeeded(s *step, out outcome) {
	s.st.Release = s.releaseStatus(c, out)
	done := "restored " + fmt.Sprint(s.o.Drift)
	s.eventf(false, api.ReasonDriftCorrected, "%s", done)
	s.setCondition(api.ConditionReleased, metav1.ConditionTrue, api.ReasonDriftCorrected, done)
	s.attempted(c, out, api.AttemptSucceeded, api.ReasonDriftCorrected, done)
}

// failed: not counted toward remediation, backed off (see backoff.go):
// Event and Released False DriftCorrectionFailed.
func (c correctDrift) failed(s *step, out outcome, err error) bool {
	s.st.Release = s.releaseStatus(c, out)
	return s.failure(c, out, err, api.ReasonDriftCorrectionFailed, false)
}

// correct restores drifted objects. Each restored object's baseline is
// taken from the write's own answer (tookWrites, as after a Helm action),
// so an edit made right after the correction is still seen as drift (a
// baseline read later could include it). Those restored before a failure
// keep theirs.
func (e *Engine) correct(ctx context.Context, key string, drift []Drift) error {
	live, user, err := e.writer(ctx)
	if err != nil {
		return err
	}
	restored := &writes{}
	defer e.drift.tookWrites(key, restored)
	for _, d := range drift {
		u, err := e.renderedOf(ctx, d.Object)
		if err != nil {
			return err
		}
		u.SetResourceVersion("")
		u.SetManagedFields(nil)
		if d.Change == DriftDeleted {
			err = live.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.ForceOwnership, client.FieldOwner(api.FieldManager))
		} else {
			err = patchBack(ctx, live, u, d.fields)
		}
		if err != nil {
			return fmt.Errorf("restoring %s: %w", d.Object, explain(err, user))
		}
		restored.wrote(u)
	}
	return nil
}

// patchBack sends a JSON patch (RFC 6902) of just the drifted fields; u is
// the object to patch and receives the answer.
func patchBack(ctx context.Context, live client.Writer, u *unstructured.Unstructured, fields []fieldDiff) error {
	if len(fields) == 0 {
		return nil
	}
	body, err := json.Marshal(jsonPatch(fields))
	if err != nil {
		return err
	}
	return live.Patch(ctx, u, client.RawPatch(types.JSONPatchType, body), client.FieldOwner(api.FieldManager))
}
