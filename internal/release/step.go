package release

import (
	"context"
	"errors"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/metrics"
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
	s := &step{e: e, t: t, obj: obj, st: st, d: e.desire(t, obj)}
	var err error
	s.o, s.objs, err = e.observe(ctx, t, obj, st, s.d)
	if err != nil {
		return Result{}, err
	}
	s.dec = Decide(s.o, t.Watch.Policy)
	res := Result{Decision: s.dec, Requeue: s.dec.RequeueAfter, Finished: s.dec.Finished}
	if s.dec.CountFailure {
		s.countFailure()
		e.event(obj, true, s.dec.Reason, "%s", s.dec.Message)
	}
	if a := actionFor(s.dec); a != nil {
		res.Ran = s.dec.Action
		res.ActionErr, err = s.act(ctx, a)
		if err != nil {
			return res, err
		}
		res.Requeue = afterActionRequeue
	}
	s.summarize(res)
	metrics.States.Set(string(obj.GetUID()), t.Watch.Kind, string(s.dec.State))
	if res.Finished {
		metrics.States.Delete(string(obj.GetUID()))
		e.Forget(s.d.ref)
	}
	return res, nil
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
			s.countFailure()
		}
		e.event(s.obj, true, string(kind)+"Failed", "%s failed: %v", kind, err)
		return err, nil
	}
	if rel != nil {
		if objs, perr := parseManifest(rel.Manifest, s.d.ref.Namespace, e.helm.Mapper()); perr == nil {
			e.manifests.put(key, rel.Version, objs)
		}
	}
	e.drift.markFresh(key, after)
	switch kind {
	case ActionInstall, ActionUpgrade:
		s.st.Failures, s.st.FailedDigest, s.st.LastFailureTime = 0, "", nil
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
	}
	return nil, nil
}

func (s *step) countFailure() {
	now := metav1.NewTime(s.e.clock.Now())
	if s.st.FailedDigest != s.d.digest {
		s.st.Failures, s.st.FailedDigest = 0, s.d.digest
	}
	s.st.Failures++
	s.st.LastFailureTime = &now
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
