package release

import (
	"context"
	"errors"
	"fmt"
	"slices"

	helmrelease "helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/internal/readiness"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// observe builds the Observation of one step: what the resource and its
// status say, then the release's revisions (owner, forgery), its latest
// revision, and for a deployed revision in sync the released objects.
func (e *Engine) observe(ctx context.Context, t Target, obj *unstructured.Unstructured, st *api.Status, d desired, sg steering) (Observation, []object, error) {
	o := e.observeResource(t, obj, st, sg)
	o.DesiredDigest, o.ValuesError = d.digest, d.err
	if !o.Deleting && sg.holds() {
		return o, nil, nil // suspended or refused: nothing to decide on
	}
	if d.err != nil && !o.Deleting {
		return o, nil, nil
	}
	if o.ValuesError == nil && st.TerminalError != "" && st.TerminalDigest == d.digest && o.ReconcileRequest == "" {
		o.ValuesError = &ChartError{Err: errors.New(st.TerminalError), Reason: terminalReason(st)}
	}
	key := releaseKey(d.ref)
	revs, err := e.revisionsFor(ctx, obj, d.ref, o.Deleting)
	if err != nil {
		return o, nil, err
	}
	if o.Owner, err = e.ownerOf(ctx, t, obj, d.ref, revs); err != nil || o.Owner.refused() {
		return o, nil, err
	}
	latestVersion := 0
	if len(revs) > 0 {
		latestVersion = revs[len(revs)-1].Version
	}
	if !e.expect.satisfied(key, latestVersion) {
		return o, nil, ErrCacheStale
	}
	forged, unsigned, err := e.forgery(ctx, t, d.ref, revs)
	if err != nil {
		return o, nil, err
	}
	if forged != "" {
		o.Forged = forged
		return o, nil, nil
	}
	if len(revs) == 0 {
		if o.Deleting && t.Watch.Policy.UninstallWait {
			objs, _ := e.manifests.get(key, lastKnownRevision(st))
			o.ObjectsRemaining = e.countRemaining(ctx, objs)
		}
		return o, nil, nil
	}
	e.observeLatest(&o, t, obj, st, d, sg, revs)
	if o.Deleting || o.Latest.Status != helmrelease.StatusDeployed || o.Latest.Digest != d.digest {
		return o, nil, nil
	}
	if unsigned != nil { // never trusted for what it names
		o.Latest.Digest, o.OutOfBand = "", unsignedMessage(o.Latest.Version, unsigned)
		return o, nil, nil
	}
	return e.observeReleased(ctx, t, obj, d, o)
}

// observeResource is what the resource and its status say, before the
// release is looked at.
func (e *Engine) observeResource(t Target, obj *unstructured.Unstructured, st *api.Status, sg steering) Observation {
	o := Observation{
		Now:                e.clock.Now(),
		Deleting:           obj.GetDeletionTimestamp() != nil,
		Failures:           st.Failures,
		FailedDigest:       st.FailedDigest,
		LastFailureMessage: st.LastFailureMessage,
		Backoff:            backoffOf(st),
		SkipUninstallHooks: obj.GetAnnotations()[api.AnnotationSkipUninstallHooks] == "true",
	}
	o.DriftMode, _ = driftModeOf(obj, t.Watch.Policy)
	if ts := obj.GetDeletionTimestamp(); ts != nil {
		o.DeletingSince = ts.Time
	}
	if st.LastFailureTime != nil {
		o.LastFailure = st.LastFailureTime.Time
	}
	o.observeSteering(sg, st)
	return o
}

// revisionsFor lists the release's revisions, oldest first.
func (e *Engine) revisionsFor(ctx context.Context, obj *unstructured.Unstructured, ref watches.ReleaseRef, deleting bool) ([]helm.Revision, error) {
	revs, err := e.helm.Revisions(ctx, e.meta, ref.Name, ref.Namespace)
	if err != nil || len(revs) > 0 || (deleting && !predecessorFinalized(obj)) {
		return revs, err
	}
	// Before an install: a release made outside chartkeeper is not in the
	// label-scoped cache; the storage's own cache of every release Secret
	// shows it (owner.go), as it does what the storage wrote. So does a
	// predecessor's release never taken over, when its resource is
	// deleted with the predecessor's finalizer.
	return e.helm.StoredRevisions(ctx, ref.Name, ref.Namespace)
}

// observeLatest is what the latest of revs (there is one) and the status
// say of it.
func (e *Engine) observeLatest(o *Observation, t Target, obj *unstructured.Unstructured, st *api.Status, d desired, sg steering, revs []helm.Revision) {
	l := revs[len(revs)-1]
	o.Latest = &Revision{Version: l.Version, Status: l.Status, Digest: l.Labels[api.LabelDigest]}
	o.observeApproval(t.Watch.Policy.Approval, obj, d, sg, st)
	if l.Status.IsPending() {
		o.PendingSince, o.ActionRunning = l.Modified, e.running.has(releaseKey(d.ref))
	}
	o.PreviousDeployed = previousDeployed(e.trustedTargets(revs))
	if rs := st.Release; rs != nil && rs.Revision == l.Version && rs.LastActionTime != nil {
		o.ReleasedAt = rs.LastActionTime.Time
		o.Latest.IsRollback = rs.LastAction == string(ActionRollback)
	}
	if l.Stamped() { // the storage's word, over the status's (history.go)
		o.Latest.IsRollback = l.MadeBy() == helm.MadeByRollback
	}
	if ts := st.Test; ts != nil && ts.Revision == l.Version {
		o.Tested = ts.DeepCopy()
	}
}

// observeReleased completes the Observation of a deployed latest revision
// labelled with the desired digest: whether it really holds the desired
// chart and values (provenance), and the state of its released objects.
func (e *Engine) observeReleased(ctx context.Context, t Target, obj *unstructured.Unstructured, d desired, o Observation) (Observation, []object, error) {
	key, version := releaseKey(d.ref), o.Latest.Version
	if p, err := e.provenanceOf(ctx, t, d, version); err != nil {
		if fe, ok := helm.IsForged(err); ok {
			o.Latest, o.Forged = nil, e.foundForged(key, fe)
			return o, nil, nil
		}
		return o, nil, err
	} else if !p.verified { // the label was inherited: out of sync
		o.Latest.Digest, o.OutOfBand = "", outOfBandMessage(version, p)
		return o, nil, nil
	}
	objs, err := e.objects(ctx, d.ref, version)
	if err != nil {
		if fe, ok := helm.IsForged(err); ok {
			o.Latest, o.Forged = nil, e.foundForged(key, fe)
			return o, nil, nil
		}
		return o, nil, err
	}
	if err := e.observeObjects(ctx, key, objs, &t.Watch.Policy, &o); err != nil {
		return o, objs, err
	}
	owner := ownership.Owner{GVK: obj.GroupVersionKind(), Namespace: obj.GetNamespace(), Name: obj.GetName()}
	if o.Leftovers, err = e.leftovers(ctx, d.ref, owner.Key(), objs); err != nil {
		return o, objs, err
	}
	return o, objs, nil
}

// predecessorFinalized reports whether obj carries a predecessor's
// finalizer (api.PredecessorFinalizers).
func predecessorFinalized(obj *unstructured.Unstructured) bool {
	for _, f := range api.PredecessorFinalizers() {
		if slices.Contains(obj.GetFinalizers(), f) {
			return true
		}
	}
	return false
}

func lastKnownRevision(st *api.Status) int {
	if st.Release == nil {
		return 0
	}
	return st.Release.Revision
}

// objects returns the parsed objects of a revision, decoding the release
// from storage only when this revision is not remembered yet.
func (e *Engine) objects(ctx context.Context, ref watches.ReleaseRef, version int) ([]object, error) {
	key := releaseKey(ref)
	if objs, ok := e.manifests.get(key, version); ok {
		return objs, nil
	}
	rel, err := e.helm.Get(ctx, ref.Name, ref.Namespace, version)
	if err != nil {
		return nil, fmt.Errorf("reading revision %d: %w", version, err)
	}
	objs, err := parseManifest(rel.Manifest, ref.Namespace, e.helm.Mapper())
	if err != nil {
		return nil, fmt.Errorf("parsing revision %d: %w", version, err)
	}
	objs = remembered(objs, ref, version)
	e.manifests.setOnly(key, version, objs)
	return objs, nil
}

// observeObjects fills drift (unless the drift mode is disabled) and
// readiness, overall and per object, from the released objects.
func (e *Engine) observeObjects(ctx context.Context, key string, objs []object, p *watches.Policy, o *Observation) error {
	res := readiness.Result{Ready: true}
	o.Objects = make([]observedObject, 0, len(objs))
	checkDrift := o.DriftMode != watches.DriftDisabled
	for _, ob := range objs {
		if err := e.watchKind(ob.GVK); err != nil {
			return err
		}
		m, err := e.metaOf(ctx, ob, true)
		if err != nil {
			return err
		}
		if m == nil {
			if checkDrift {
				o.Drift = append(o.Drift, Drift{Object: ob, Change: DriftDeleted})
			}
			res.Add(false, false, ob.String()+": missing")
			o.Objects = append(o.Objects, observedObject{object: ob, state: api.ObjectMissing})
			continue
		}
		if checkDrift {
			fields, err := e.drift.edited(ctx, e, key, ob, m, p.DriftIgnore)
			if err != nil {
				return err
			}
			if len(fields) > 0 {
				o.Drift = append(o.Drift, Drift{Object: ob, Change: DriftEdited, fields: fields})
			}
		}
		r, err := e.readinessOf(ctx, key, ob, m, p.Health)
		if err != nil {
			return err
		}
		res.Add(r.current, r.failed, r.why)
		o.ExpressionTimedOut = o.ExpressionTimedOut || r.timedOut
		o.Objects = append(o.Objects, observed(ob, r))
	}
	o.Ready, o.ReadyFailed = res.Ready, res.Failed
	if !res.Ready {
		o.NotReady = res.Message()
	}
	return nil
}

// metaOf returns an object's metadata from the cache, or nil when there is
// no such object. With confirmAbsent, a cache miss is checked with the API
// server (the cache may lag behind a create); without, the cache's word is
// taken: when waiting for deleted objects to go, a lagging cache at worst
// ends the wait while an object Helm already deleted is still terminating,
// and saves a request per object per check.
func (e *Engine) metaOf(ctx context.Context, ob object, confirmAbsent bool) (*metav1.PartialObjectMetadata, error) {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(ob.GVK)
	key := client.ObjectKey{Namespace: ob.Namespace, Name: ob.Name}
	err := e.meta.Get(ctx, key, m)
	if err == nil {
		return m, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, err
	}
	if !confirmAbsent {
		return nil, nil
	}
	if err := e.live.Get(ctx, key, m); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return m, nil
}

// countRemaining counts released objects that still exist (for deletion).
// Kept objects (helm.sh/resource-policy: keep) are not counted: Helm's
// uninstall leaves them, so waiting for them would only wait out the
// uninstall timeout.
func (e *Engine) countRemaining(ctx context.Context, objs []object) int {
	n := 0
	for _, ob := range objs {
		if ob.kept() {
			continue
		}
		if m, err := e.metaOf(ctx, ob, false); err != nil || m != nil {
			n++
		}
	}
	return n
}
