package release

import (
	"context"
	"time"

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
	// timedOut: a readiness expression was cut at its deadline (the
	// verdict is remembered for this resourceVersion as any other).
	timedOut bool
	// cause is the reason the Pods of a workload that is not ready give
	// (also in why), recheck when they are read again (podreasons.go);
	// empty and zero for any other object.
	cause   string
	recheck time.Time
}

// readinessOf returns one object's readiness (rules: the watch's
// readiness expressions); a workload that is not ready also says what
// its Pods give as the reason (withPodReason).
func (e *Engine) readinessOf(ctx context.Context, key string, ob object, m *metav1.PartialObjectMetadata, rules *readiness.Rules) (readyAt, error) {
	r, err := e.objectReadiness(ctx, key, ob, m, rules)
	if err != nil {
		return r, err
	}
	return e.withPodReason(ctx, key, ob, m, r), nil
}

// objectReadiness is an object's own readiness, remembered per
// resourceVersion.
func (e *Engine) objectReadiness(ctx context.Context, key string, ob object, m *metav1.PartialObjectMetadata, rules *readiness.Rules) (readyAt, error) {
	if !ob.needsStatus && rules.For(ob.GVK.GroupKind()) == nil {
		return readyAt{current: true}, nil // exists, and has nothing to wait for
	}
	if r, ok := e.ready.get(key, m.GetUID()); ok && r.rv == m.GetResourceVersion() {
		return r, nil
	}
	full, err := e.statusOf(ctx, ob, m)
	if err != nil {
		return readyAt{}, err
	}
	v := rules.Judge(ctx, full)
	if ctx.Err() != nil {
		return readyAt{}, ctx.Err() // cut by the step's end, not the object's cost: not remembered
	}
	r := readyAt{rv: full.GetResourceVersion(), current: v.Current, failed: v.Failed, why: v.Why, timedOut: v.TimedOut}
	e.ready.set(key, full.GetUID(), r)
	return r, nil
}

// statusOf reads an object for its readiness: from the status cache when
// it holds the version the metadata cache shows (both follow the same
// object, and are nearly always at the same version), else from the API
// server.
func (e *Engine) statusOf(ctx context.Context, ob object, m *metav1.PartialObjectMetadata) (*unstructured.Unstructured, error) {
	key := client.ObjectKey{Namespace: ob.Namespace, Name: ob.Name}
	if e.statuses != nil {
		cached := &unstructured.Unstructured{}
		cached.SetGroupVersionKind(ob.GVK)
		if err := e.statuses.Get(ctx, key, cached); err == nil && cached.GetResourceVersion() == m.GetResourceVersion() {
			return cached, nil
		}
	}
	full := &unstructured.Unstructured{}
	full.SetGroupVersionKind(ob.GVK)
	if err := e.live.Get(ctx, key, full); err != nil {
		return nil, err
	}
	return full, nil
}
