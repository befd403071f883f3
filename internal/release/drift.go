package release

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DriftChange says how a released object drifted.
type DriftChange string

// The drift changes.
const (
	DriftDeleted DriftChange = "deleted"
	DriftEdited  DriftChange = "edited"
)

// Drift is a released object found changed outside Helm.
type Drift struct {
	Object object
	Change DriftChange
}

// String reads "Deployment ns/web (edited)".
func (d Drift) String() string { return d.Object.String() + " (" + string(d.Change) + ")" }

// driftTracker detects hand edits cheaply. For every released object it
// remembers a baseline (its generation, or its resourceVersion for kinds
// without one) taken when the object was known to match the release. Only
// an object whose baseline moved is checked, by a server-side-apply dry run
// of the released object: if applying it would change the object, the
// object drifted. After one of our own actions (and after a restart) the
// baselines are taken as they are, without a check.
type driftTracker struct {
	baseline *objectMemo[string]
	mu       sync.Mutex
	fresh    map[string]int // release key -> revision whose baselines are retaken
}

func newDriftTracker() *driftTracker {
	return &driftTracker{baseline: newObjectMemo[string](), fresh: map[string]int{}}
}

// markFresh says our own action just made revision version of the release.
func (d *driftTracker) markFresh(key string, version int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.fresh[key] = version
}

func (d *driftTracker) takeFresh(key string, version int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.fresh[key]
	if ok && v == version {
		delete(d.fresh, key)
	}
	return ok && v == version
}

func marker(m *metav1.PartialObjectMetadata) string {
	if g := m.GetGeneration(); g > 0 {
		return "g" + strconv.FormatInt(g, 10)
	}
	return "rv" + m.GetResourceVersion()
}

// edited reports whether a released object was changed by someone else.
func (d *driftTracker) edited(ctx context.Context, e *Engine, key string, ob object, m *metav1.PartialObjectMetadata, fresh bool) (bool, error) {
	now := marker(m)
	base, known := d.baseline.get(key, m.GetUID())
	if fresh || !known || base == now {
		d.baseline.set(key, m.GetUID(), now)
		return false, nil
	}
	differs, err := e.applyWouldChange(ctx, ob)
	if err != nil {
		return false, fmt.Errorf("checking %s for drift: %w", ob, err)
	}
	if !differs {
		d.baseline.set(key, m.GetUID(), now)
	}
	return differs, nil
}

// driftCheckManager is the field manager of drift dry runs; nothing is
// ever written under it.
const driftCheckManager = "chartkeeper-drift-check"

// applyWouldChange dry-runs a server-side apply of the released object and
// compares the result with the live object.
func (e *Engine) applyWouldChange(ctx context.Context, ob object) (bool, error) {
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(ob.GVK)
	if err := e.live.Get(ctx, client.ObjectKey{Namespace: ob.Namespace, Name: ob.Name}, live); err != nil {
		return false, err
	}
	applied := ob.Desired.DeepCopy()
	applied.SetResourceVersion("")
	applied.SetManagedFields(nil)
	if err := e.live.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied),
		client.DryRunAll, client.ForceOwnership, client.FieldOwner(driftCheckManager)); err != nil {
		return false, err
	}
	return !equality.Semantic.DeepEqual(comparable(live), comparable(applied)), nil
}

// comparable strips what an apply changes without changing the object.
func comparable(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	c.SetManagedFields(nil)
	c.SetResourceVersion("")
	c.SetGeneration(0)
	return c.Object
}
