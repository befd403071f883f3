package release

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"helm.sh/helm/v3/pkg/chartutil"
	helmrelease "helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/internal/readiness"
	"github.com/chartkeeper/chartkeeper/internal/values"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// desired is what a custom resource asks for.
type desired struct {
	ref watches.ReleaseRef
	// account is the ServiceAccount the release runs as (zero: the
	// operator's own rights; identity.go).
	account watches.ServiceAccountRef
	values  chartutil.Values
	digest  string
	err     error // the values cannot be computed
	// redact hides the values the chart's schema marks secret (in the
	// spec and in the computed values) from every message: conditions,
	// events, logs, hook failures. Built once per step.
	redact *values.Redactor
	// secrets are the strings redact hides.
	secrets []string
}

// desire computes the desired release: name, values (valuesFrom, under the
// spec translated by the kind's Translator hooks, with overrides on top)
// and their digest. A hook failure is returned apart: it is retried, not a
// verdict on the values.
func (s *step) desire(ctx context.Context) (hookErr error) {
	d := &s.d
	t, obj := s.t, s.obj
	d.ref, d.err = t.Watch.Release(obj.GetName(), obj.GetNamespace())
	if d.err != nil {
		return nil
	}
	if d.err = s.resolveAccount(); d.err != nil {
		return nil
	}
	spec, err := values.FromSpec(obj)
	if err != nil {
		d.err = err
		return nil
	}
	secrets := append(values.SecretStrings(t.Watch.Chart, spec), s.from.secrets...)
	d.redact = values.NewRedactor(secrets)
	defer func() {
		if d.values != nil { // a translator or override may have added secrets
			if more := values.SecretStrings(t.Watch.Chart, d.values); len(more) > 0 {
				secrets = append(secrets, more...)
				d.redact = values.NewRedactor(secrets)
			}
		}
		d.secrets = secrets
		d.err = d.redact.Error(d.err)
		hookErr = d.redact.Error(hookErr)
	}()
	if s.from.err != nil {
		d.err = s.from.err
		return nil
	}
	if obj.GetDeletionTimestamp() == nil { // a resource being deleted needs no new values
		if len(s.chain) > 0 {
			// The user's spec is checked against the chart's schema before
			// any hook acts on it: a hook must not change anything outside
			// Helm (etcd membership, say) for a spec the chart refuses.
			in, err := s.compute(spec)
			if err == nil {
				err = values.Validate(t.Watch.Chart, in)
			}
			if err != nil {
				d.err = err
				return nil
			}
		}
		if spec, err = s.chain.Translate(ctx, s.hookRequest(), spec); err != nil {
			return err
		}
	}
	if d.values, d.err = s.compute(spec); d.err != nil {
		return nil
	}
	d.digest, d.err = values.Digest(t.ChartDigest, d.values)
	return nil
}

// observe builds the Observation of one step.
func (e *Engine) observe(ctx context.Context, t Target, obj *unstructured.Unstructured, st *api.Status, d desired, sg steering) (Observation, []object, error) {
	o := Observation{
		Now:                e.clock.Now(),
		Deleting:           obj.GetDeletionTimestamp() != nil,
		DesiredDigest:      d.digest,
		ValuesError:        d.err,
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
	revs, err := e.helm.Revisions(ctx, e.meta, d.ref.Name, d.ref.Namespace)
	if err != nil {
		return o, nil, err
	}
	if len(revs) == 0 && (!o.Deleting || predecessorFinalized(obj)) {
		// Before an install: a release made outside chartkeeper is not in
		// the label-scoped cache; the storage's own cache of every release
		// Secret shows it (owner.go), as it does what the storage wrote.
		// So does a predecessor's release never taken over, when its
		// resource is deleted with the predecessor's finalizer.
		if revs, err = e.helm.StoredRevisions(ctx, d.ref.Name, d.ref.Namespace); err != nil {
			return o, nil, err
		}
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
	l := revs[len(revs)-1]
	o.Latest = &Revision{Version: l.Version, Status: l.Status, Digest: l.Labels[api.LabelDigest]}
	o.observeApproval(t.Watch.Policy.Approval, obj, d, sg, st)
	if l.Status.IsPending() {
		o.PendingSince, o.ActionRunning = l.Modified, e.running.has(key)
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
	if o.Deleting || o.Latest.Status != helmrelease.StatusDeployed || o.Latest.Digest != d.digest {
		return o, nil, nil
	}
	if unsigned != nil { // never trusted for what it names
		o.Latest.Digest, o.OutOfBand = "", unsignedMessage(l.Version, unsigned)
		return o, nil, nil
	}
	if p, err := e.provenanceOf(ctx, t, d, l.Version); err != nil {
		if fe, ok := helm.IsForged(err); ok {
			o.Latest, o.Forged = nil, e.foundForged(key, fe)
			return o, nil, nil
		}
		return o, nil, err
	} else if !p.verified { // the label was inherited: out of sync
		o.Latest.Digest, o.OutOfBand = "", outOfBandMessage(l.Version, p)
		return o, nil, nil
	}
	objs, err := e.objects(ctx, d.ref, l.Version)
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
