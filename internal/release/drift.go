package release

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/internal/watches"
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
	// fields are the differing fields of an edited object (ignored
	// paths left out).
	fields []fieldDiff
}

// String reads "Deployment ns/web (edited: /spec/replicas)".
func (d Drift) String() string {
	if len(d.fields) == 0 {
		return d.Object.String() + " (" + string(d.Change) + ")"
	}
	return d.Object.String() + " (" + string(d.Change) + ": " + fieldList(d.fields) + ")"
}

// driftTracker detects hand edits cheaply. For every released object it
// remembers a baseline: a mark (its generation, or its resourceVersion for
// kinds without one) and the fields found differing at that mark. Only an
// object whose mark moved on, or that has no baseline yet (the first look
// after a start), is checked, by a server-side-apply dry run of the
// released object: the fields that applying it would change, less the
// ignored ones, are its drift. After one of our own actions succeeds, the
// objects it wrote get baselines from the answers to its writes (tookWrites),
// not from a later read: an edit made between the action and the next look
// moves the mark past the write's, and is checked.
type driftTracker struct {
	baseline *objectMemo[driftBaseline]
}

type driftBaseline struct {
	marker mark
	diffs  []fieldDiff
}

func newDriftTracker() *driftTracker {
	return &driftTracker{baseline: newObjectMemo[driftBaseline]()}
}

// mark is where an object stands: its generation, which moves on with
// each change of its spec, or, for kinds without one, its resourceVersion.
type mark struct {
	generation int64
	version    string
}

func markOf(o metav1.Object) mark {
	if g := o.GetGeneration(); g > 0 {
		return mark{generation: g}
	}
	return mark{version: o.GetResourceVersion()}
}

// before reports whether m is known to come before n: a cache that has not
// yet caught up with the write n was taken from. Generations are compared
// as numbers, resourceVersions too when both are (etcd's are).
func (m mark) before(n mark) bool {
	if m.generation > 0 || n.generation > 0 {
		return m.generation > 0 && n.generation > 0 && m.generation < n.generation
	}
	a, err1 := strconv.ParseUint(m.version, 10, 64)
	b, err2 := strconv.ParseUint(n.version, 10, 64)
	return err1 == nil && err2 == nil && a < b
}

// writes collects the released objects as the answers to an action's
// writes left them (helm.Guard.Wrote); they become baselines only when the
// action succeeds.
type writes struct {
	mu    sync.Mutex
	marks map[types.UID]mark
}

func (w *writes) wrote(o metav1.Object) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.marks == nil {
		w.marks = map[types.UID]mark{}
	}
	w.marks[o.GetUID()] = markOf(o)
}

// tookWrites makes the objects an action of the release wrote baselines
// with nothing drifted: as the write answered, each is as the release
// rendered it. Objects the action did not write keep their baselines.
//
// One write moves a generation on by one at most. An answer more than one
// past the baseline the action started from says someone else changed the
// object's spec too, unseen (Helm's update patches an object known as
// released without reading it, and the cache may not have shown the edit
// yet): that object gets no baseline, and the next look checks it.
func (d *driftTracker) tookWrites(key string, w *writes) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for uid, m := range w.marks {
		if base, known := d.baseline.get(key, uid); known && base.marker.generation > 0 && m.generation > base.marker.generation+1 {
			d.baseline.drop(key, uid)
			continue
		}
		d.baseline.set(key, uid, driftBaseline{marker: m})
	}
}

// edited returns the fields of a released object changed by someone else,
// the ignored ones left out. A cache behind the baseline's write (its mark
// before the baseline's) gives the baseline's answer.
func (d *driftTracker) edited(ctx context.Context, e *Engine, key string, ob object, m *metav1.PartialObjectMetadata, ignore []watches.DriftIgnore) ([]fieldDiff, error) {
	now := markOf(m)
	if base, known := d.baseline.get(key, m.GetUID()); known && (base.marker == now || now.before(base.marker)) {
		return base.diffs, nil
	}
	diffs, err := e.driftOf(ctx, ob)
	if err != nil {
		return nil, fmt.Errorf("checking %s for drift: %w", ob, err)
	}
	diffs = withoutIgnored(diffs, ignoredPaths(ignore, ob))
	d.baseline.set(key, m.GetUID(), driftBaseline{marker: now, diffs: diffs})
	return diffs, nil
}

// asReleased reports, for objects of the release's current revision,
// whether each is known to be as that revision released it: its drift
// baseline was taken at its current mark and found nothing (ignored
// fields aside), or it is as the last action's write answered. Helm's
// update patches such an object from one manifest to the next without
// reading it first (helm.Guard.AsReleased). With drift detection disabled
// only the baselines of writes are taken.
func (e *Engine) asReleased(ctx context.Context, key string) func(ownership.Placement) bool {
	return func(p ownership.Placement) bool {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(p.GVK)
		if err := e.meta.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: p.Name}, m); err != nil {
			return false
		}
		base, known := e.drift.baseline.get(key, m.GetUID())
		return known && base.marker == markOf(m) && len(base.diffs) == 0
	}
}

// driftCheckManager is the field manager of drift dry runs; nothing is
// ever written under it.
const driftCheckManager = "chartkeeper-drift-check"

// driftOf dry-runs a server-side apply of the released object and lists
// the fields where the result differs from the live object: the fields the
// release sets that were changed (defaults applied by the API server on
// both sides, so a field the chart leaves out is never drift).
func (e *Engine) driftOf(ctx context.Context, ob object) ([]fieldDiff, error) {
	c, user, err := e.writer(ctx)
	if err != nil {
		return nil, err
	}
	want, err := e.renderedOf(ctx, ob)
	if err != nil {
		return nil, err
	}
	// The dry run applies to the object as stored when it runs. A write
	// between the read and the dry run (a controller updating the
	// object's status or annotations) would show as a difference the
	// correction then writes back, so the two must be of one version.
	for try := 1; ; try++ {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(ob.GVK)
		if err := c.Get(ctx, client.ObjectKey{Namespace: ob.Namespace, Name: ob.Name}, live); err != nil {
			return nil, explain(err, user)
		}
		applied := want.DeepCopy()
		applied.SetResourceVersion("")
		applied.SetManagedFields(nil)
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(applied),
			client.DryRunAll, client.ForceOwnership, client.FieldOwner(driftCheckManager)); err != nil {
			return nil, explain(err, user)
		}
		if applied.GetResourceVersion() == live.GetResourceVersion() {
			return diffFields(withoutApplyNoise(live), withoutApplyNoise(applied)), nil
		}
		if try == maxDriftReads {
			return nil, fmt.Errorf("%s changed under each of %d comparisons with its released form", ob, maxDriftReads)
		}
	}
}

// maxDriftReads bounds the reads of an object that keeps changing while
// driftOf compares it.
const maxDriftReads = 3

// withoutApplyNoise strips what an apply changes without changing the
// object, and the status: the controllers that own it write it, Helm never
// does, and a write of the object leaves it as it is.
func withoutApplyNoise(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	c.SetManagedFields(nil)
	c.SetResourceVersion("")
	c.SetGeneration(0)
	delete(c.Object, "status")
	return c.Object
}
