package release

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/readiness"
)

// readyAt is an object's readiness as read at a resourceVersion: an
// object is read in full again only after it changed.
type readyAt struct {
	rv              string
	current, failed bool
	why             string
}

// readinessOf folds one object's readiness into res.
func (e *Engine) readinessOf(ctx context.Context, key string, ob object, m *metav1.PartialObjectMetadata, res *readiness.Result) error {
	if !readiness.NeedsStatusOf(ob.Desired) {
		return nil // exists, and has nothing to wait for
	}
	if r, ok := e.ready.get(key, m.GetUID()); ok && r.rv == m.GetResourceVersion() {
		res.Add(r.current, r.failed, r.why)
		return nil
	}
	full := &unstructured.Unstructured{}
	full.SetGroupVersionKind(ob.GVK)
	if err := e.live.Get(ctx, client.ObjectKey{Namespace: ob.Namespace, Name: ob.Name}, full); err != nil {
		return err
	}
	current, failed, why := readiness.Check(full)
	e.ready.set(key, full.GetUID(), readyAt{rv: full.GetResourceVersion(), current: current, failed: failed, why: why})
	res.Add(current, failed, why)
	return nil
}
