package release

import (
	"context"
	"errors"
	"strings"
	"time"

	helmrelease "helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/hooks"
	"github.com/chartkeeper/chartkeeper/internal/metrics"
	"github.com/chartkeeper/chartkeeper/internal/values"
)

// step is the working state of one Step.
type step struct {
	e    *Engine
	t    Target
	obj  *unstructured.Unstructured
	st   *api.Status
	d    desired
	o    Observation
	objs []object
	dec  Decision
	// chain is the kind's Go hooks.
	chain hookChain
}

// hookRequest is what the step's hooks get.
func (s *step) hookRequest() hooks.Request {
	if s.st.App == nil {
		s.st.App = map[string]any{}
	}
	return hooks.Request{
		Object: s.obj, Client: s.e.live, ReleaseName: s.d.ref.Name, ReleaseNamespace: s.d.ref.Namespace,
		Now: s.e.clock.Now, Log: s.e.log.WithValues("kind", s.obj.GetKind(), "name", s.obj.GetName()), AppStatus: s.st.App,
	}
}

// Result is what a Step did and asks for.
type Result struct {
	Decision Decision
	// Ran is the action run (ActionNone if none); ActionErr its error.
	Ran       ActionKind
	ActionErr error
	// Requeue: step again after this long (0: only on change).
	Requeue time.Duration
	// Finished: the resource is deleted and its release gone; drop the finalizer.
	Finished bool
}

// afterActionRequeue is how soon a step follows an action: the next step
// observes its result (and waits for the cache to show it).
const afterActionRequeue = 200 * time.Millisecond

// Step observes one custom resource, decides, runs at most one action and
// writes the outcome into st (conditions, release summary, failures). The
// error is ErrCacheStale, a transient error (requeue with backoff), or nil;
// action failures are reported in Result and st, not as an error.
func (e *Engine) Step(ctx context.Context, t Target, obj *unstructured.Unstructured, st *api.Status) (Result, error) {
	s := &step{e: e, t: t, obj: obj, st: st, chain: hookChain(e.hooks.For(t.Watch.GroupVersionKind().GroupKind()))}
	defer func() {
		if len(st.App) == 0 {
			st.App = nil
		}
	}()
	if err := s.desire(ctx); err != nil {
		return Result{}, s.hookFailed(err)
	}
	var err error
	s.o, s.objs, err = e.observe(ctx, t, obj, st, s.d)
	if err != nil {
		return Result{}, err
	}
	s.dec = Decide(s.o, t.Watch.Policy)
	res := Result{Decision: s.dec, Requeue: s.dec.RequeueAfter, Finished: s.dec.Finished}
	if s.dec.CountFailure {
		s.countFailure(s.dec.Message)
		e.event(obj, true, s.dec.Reason, "%s", s.dec.Message)
	}
	if err := s.hooksBefore(ctx); err != nil {
		return res, s.hookFailed(err)
	}
	if a := actionFor(s.dec); a != nil {
		res.Ran = s.dec.Action
		res.ActionErr, err = s.act(ctx, a)
		if err != nil {
			return res, err
		}
		res.Requeue = afterActionRequeue
	} else if s.dec.State == StateInSync || s.dec.State == StateUnready {
		hr, err := s.chain.PostRelease(ctx, s.hookRequest(), s.postRelease())
		if err != nil {
			return res, s.hookFailed(err)
		}
		if hr.RequeueAfter > 0 && (res.Requeue == 0 || hr.RequeueAfter < res.Requeue) {
			res.Requeue = hr.RequeueAfter
		}
	}
	s.summarize(res)
	metrics.States.Set(string(obj.GetUID()), t.Watch.Kind, string(s.dec.State))
	if res.Finished {
		metrics.States.Delete(string(obj.GetUID()))
		e.Forget(s.d.ref)
	}
	return res, nil
}

// hooksBefore runs the hooks due before the decided action: PreRelease
// before an install or upgrade, BeforeUninstall before the uninstall of a
// deleted resource.
func (s *step) hooksBefore(ctx context.Context) error {
	var err error
	switch {
	case s.dec.Action == ActionInstall || s.dec.Action == ActionUpgrade:
		_, err = s.chain.PreRelease(ctx, s.hookRequest(), s.d.values)
	case s.dec.Action == ActionUninstall && s.o.Deleting:
		_, err = s.chain.BeforeUninstall(ctx, s.hookRequest())
	}
	return err
}

// postRelease describes the deployed release to PostRelease hooks.
func (s *step) postRelease() hooks.Release {
	rel := hooks.Release{Name: s.d.ref.Name, Namespace: s.d.ref.Namespace, Ready: s.dec.State == StateInSync}
	if s.o.Latest != nil {
		rel.Revision = s.o.Latest.Version
	}
	for _, ob := range s.objs {
		rel.Objects = append(rel.Objects, hooks.ObjectRef{GVK: ob.GVK, Namespace: ob.Namespace, Name: ob.Name})
	}
	name, ns, rev := rel.Name, rel.Namespace, rel.Revision
	rel.Get = func(ctx context.Context) (*helmrelease.Release, error) { return s.e.helm.Get(ctx, name, ns, rev) }
	return rel
}

// hookFailed records a hook's failure: Ready False naming the hook; the
// release is left as it is. It returns err, which the controller retries
// with backoff.
func (s *step) hookFailed(err error) error {
	gen := s.obj.GetGeneration()
	s.st.ObservedGeneration = gen
	reason := api.ReasonHookFailed
	var he *hooks.Error
	if errors.As(err, &he) {
		reason = hookReason(he.Hook)
	}
	for _, typ := range []string{api.ConditionReady, api.ConditionReconciling} {
		status := metav1.ConditionFalse
		if typ == api.ConditionReconciling {
			status = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&s.st.Conditions, metav1.Condition{Type: typ, Status: status, Reason: reason,
			Message: trim(err.Error()), ObservedGeneration: gen})
	}
	meta.RemoveStatusCondition(&s.st.Conditions, api.ConditionStalled)
	s.e.event(s.obj, true, reason, "%v", err)
	return err
}

// hookReason names the failed hook in a condition reason: "tls" ->
// "TlsHookFailed", "final-backup" -> "FinalBackupHookFailed".
func hookReason(name string) string {
	var b strings.Builder
	upper := true
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z':
			if upper {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			upper = false
		case r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' && b.Len() > 0:
			b.WriteRune(r)
			upper = false
		default:
			upper = true
		}
	}
	return b.String() + api.ReasonHookFailed
}

// act runs the action and records what it did. It returns the action's
// error (reported, counted) and, separately, an error that should make the
// whole step retry (transient trouble before anything was stored).
func (s *step) act(ctx context.Context, a action) (actionErr, stepErr error) {
	e, kind := s.e, s.dec.Action
	before := 0
	if s.o.Latest != nil {
		before = s.o.Latest.Version
	}
	begin := e.clock.Now()
	rel, err := a.run(ctx, s)
	err = values.RedactError(err, s.d.secrets)
	metrics.ObserveAction(string(kind), err, e.clock.Since(begin))

	// Read back what storage holds now: it tells whether the action changed
	// anything, and what the cache must show before the next step acts.
	revs, rerr := e.revisions(ctx, e.live, s.d.ref)
	if rerr != nil {
		return err, rerr
	}
	after, digest := 0, ""
	if len(revs) > 0 {
		after, digest = revs[len(revs)-1].version, revs[len(revs)-1].digest
	}
	key := releaseKey(s.d.ref)
	e.expect.expect(key, after)
	changed := after != before || (kind == ActionUnlock && err == nil)

	now := metav1.NewTime(e.clock.Now())
	if changed || kind == ActionCorrectDrift {
		s.st.Release = s.releaseStatus(after, digest, kind, now)
	}
	if err != nil {
		var ce *ChartError
		switch {
		case !changed && (errors.As(err, &ce) || !IsTransient(err)) && (kind == ActionInstall || kind == ActionUpgrade):
			// The chart rejects these values: terminal until they change.
			s.st.TerminalError, s.st.TerminalDigest = err.Error(), s.d.digest
			e.event(s.obj, true, api.ReasonChartError, "%s", err)
			return err, nil
		case !changed && IsTransient(err):
			e.event(s.obj, true, api.ReasonTransientError, "%s failed, will retry: %v", kind, err)
			return err, err
		}
		if kind == ActionInstall || kind == ActionUpgrade || kind == ActionRollback {
			s.countFailure(string(kind) + " failed: " + err.Error())
		}
		e.event(s.obj, true, string(kind)+"Failed", "%s failed: %v", kind, err)
		return err, nil
	}
	if rel != nil {
		if objs, perr := parseManifest(rel.Manifest, s.d.ref.Namespace, e.helm.Mapper()); perr == nil {
			e.manifests.put(key, rel.Version, objs)
		}
	}
	if kind != ActionCorrectDrift && kind != ActionPrune { // a correction records its own baselines; a prune leaves them
		e.drift.markFresh(key, after)
	}
	switch kind {
	case ActionInstall, ActionUpgrade:
		s.st.Failures, s.st.FailedDigest, s.st.LastFailureTime, s.st.LastFailureMessage = 0, "", nil, ""
		s.st.TerminalError, s.st.TerminalDigest = "", ""
		e.event(s.obj, false, string(kind)+"Succeeded", "%s of revision %d succeeded", kind, after)
	case ActionRollback:
		e.event(s.obj, false, api.ReasonRollbackSucceeded, "rolled back to revision %d (now revision %d): %s", s.dec.RollbackTo, after, s.dec.Message)
	case ActionUninstall:
		e.event(s.obj, false, api.ReasonUninstallSucceeded, "uninstalled: %s", s.dec.Message)
	case ActionUnlock:
		e.event(s.obj, true, api.ReasonUnlocked, "%s; marked failed so it can be remediated", s.dec.Message)
	case ActionCorrectDrift:
		e.event(s.obj, false, api.ReasonDriftCorrected, "restored %v", s.o.Drift)
	case ActionPrune:
		e.event(s.obj, false, api.ReasonPruned, "deleted what earlier revisions left: %s", listObjects(s.o.Leftovers, 10))
	}
	return nil, nil
}

// maxFailureMessage bounds the failure message kept in the status, in
// characters (an error can quote a whole manifest).
const maxFailureMessage = 1024

// countFailure counts a failed attempt at the desired digest and keeps why.
func (s *step) countFailure(why string) {
	now := metav1.NewTime(s.e.clock.Now())
	if s.st.FailedDigest != s.d.digest {
		s.st.Failures, s.st.FailedDigest = 0, s.d.digest
	}
	s.st.Failures++
	s.st.LastFailureTime = &now
	if r := []rune(why); len(r) > maxFailureMessage {
		why = string(r[:maxFailureMessage]) + "…"
	}
	s.st.LastFailureMessage = why
}

func (s *step) releaseStatus(revision int, digest string, kind ActionKind, now metav1.Time) *api.ReleaseStatus {
	if revision == 0 {
		return nil
	}
	rs := &api.ReleaseStatus{Name: s.d.ref.Name, Namespace: s.d.ref.Namespace, Revision: revision, Digest: digest,
		LastAction: string(kind), LastActionTime: &now}
	if prev := s.st.Release; kind == ActionRollback && prev != nil {
		rs.Chart, rs.Version, rs.AppVersion = prev.Chart, prev.Version, prev.AppVersion
	} else {
		md := s.t.Watch.Chart.Metadata
		rs.Chart, rs.Version, rs.AppVersion = md.Name, md.Version, md.AppVersion
	}
	return rs
}
