package release

import (
	"context"
	"fmt"

	helmrelease "helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// prune deletes the objects earlier (failed or interrupted) revisions
// left, Observation.Leftovers (the action of StateLeftovers; see
// leftovers.go). It makes no revision and keeps the drift baselines.
type prune struct{ unhooked }

func (prune) kind() ActionKind { return ActionPrune }

func (prune) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	if err := s.admitStored(s.o.Leftovers); err != nil {
		return nil, err
	}
	return nil, s.e.prune(ctx, s.o.Leftovers)
}

// succeeded: Event, Released True and an attempt Pruned naming what was
// deleted.
func (p prune) succeeded(s *step, out outcome) {
	s.recordRevision(p, out)
	s.eventf(false, api.ReasonPruned, "deleted what earlier revisions left: %s", listObjects(s.o.Leftovers, 10))
	done := "deleted what earlier revisions left: " + listObjects(s.o.Leftovers, 5)
	s.setCondition(api.ConditionReleased, metav1.ConditionTrue, api.ReasonPruned, done)
	s.attempted(p, out, api.AttemptSucceeded, api.ReasonPruned, done)
}

// failed: not counted toward remediation, backed off (see backoff.go):
// Event and Released False PruneFailed.
func (p prune) failed(s *step, out outcome, err error) bool {
	s.recordRevision(p, out)
	return s.failure(p, out, err, api.ReasonPruneFailed, false)
}

// prune deletes objects (leftovers); one already gone is no error.
func (e *Engine) prune(ctx context.Context, objs []object) error {
	live, user, err := e.writer(ctx)
	if err != nil {
		return err
	}
	for _, ob := range objs {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(ob.GVK)
		m.SetNamespace(ob.Namespace)
		m.SetName(ob.Name)
		if err := live.Delete(ctx, m, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s: %w", ob, explain(err, user))
		}
	}
	return nil
}
