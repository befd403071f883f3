package release

import (
	"context"
	"errors"
	"time"

	helmrelease "helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/hooks"
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
	// chain is the kind's Go hooks.
	chain hookChain
	// steer is what the resource's annotations ask.
	steer steering
	// from is what the resource takes from its watch's valuesFrom.
	from fromSources
	// writes: the released objects as the action's writes answered (see
	// guard).
	writes *writes
	// differs says what of a revision taken over is not as desired
	// (takeover.go).
	differs string
	// allGone: the uninstall's DELETEs were each answered gone (see
	// uninstall.endsDeletion).
	allGone bool
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
	// Requeue: step again after this long (0: only on change). It is final:
	// the engine's requeue policy (see requeue) is applied.
	Requeue time.Duration
	// Finished: the resource is deleted and its release gone; drop the finalizer.
	Finished bool
	// Causes are what the Pods of released workloads not ready say keeps
	// them (podreasons.go), as the conditions' messages word them: a
	// status whose Ready message says one the written status does not is
	// news to write at once, not a rewording to hold back.
	Causes []string
}

// Step observes one custom resource, decides, runs at most one action and
// writes the outcome into st (conditions, release summary, failures). The
// error is ErrCacheStale, a transient error (requeue with backoff), or nil;
// action failures are reported in Result and st, not as an error.
func (e *Engine) Step(ctx context.Context, t Target, obj *unstructured.Unstructured, st *api.Status) (Result, error) {
	sg := steeringOf(obj.GetAnnotations())
	t = sg.overlay(t)
	ctx = helm.WithStorage(ctx, helm.Storage(t.Watch.ReleaseStorage()))
	s := &step{e: e, t: t, obj: obj, st: st, steer: sg, chain: hookChain(e.hooks.For(t.Watch.GroupVersionKind().GroupKind()))}
	defer func() {
		s.predecessorStatus(ctx) // predecessor.go
		if len(st.App) == 0 {
			st.App = nil
		}
	}()
	if obj.GetDeletionTimestamp() != nil || !sg.holds() { // suspended or refused: no hook runs
		if err := s.readValuesFrom(ctx); err != nil {
			return Result{}, err
		}
		if !errors.As(s.from.err, new(*ValuesSourceError)) {
			s.backoffCleared(phaseValuesFrom)
		}
		if err := s.desire(ctx); err != nil {
			return s.hookFailed(Result{}, phaseTranslate, err), nil
		}
		s.backoffCleared(phaseTranslate)
	}
	ctx = withRedactor(withAccount(ctx, s.d.account), s.d.redact)
	var err error
	s.o, s.objs, err = e.observe(ctx, t, obj, st, s.d, sg)
	if err != nil {
		return Result{}, err
	}
	s.recordReconcileRequest()
	s.takeInventory()
	s.dec = s.decide()
	res := Result{Decision: s.dec, Requeue: s.dec.RequeueAfter, Finished: s.dec.Finished}
	if s.dec.CountFailure {
		s.countFailure(s.dec.Message)
		s.unreadyInTime(s.o.Latest.Version)
		s.eventf(true, s.dec.Reason, "%s", s.dec.Message)
	}
	if s.dec.Reason == api.ReasonChangedOutside && s.dec.Action != ActionNone {
		s.eventf(true, api.ReasonChangedOutside, "%s", s.dec.Message)
	}
	if s.dec.Reason == api.ReasonReleaseForged && (s.dec.Finished || !s.stalledSo(api.ReasonReleaseForged, s.dec.Message)) {
		s.eventf(true, api.ReasonReleaseForged, "%s", s.dec.Message)
	}
	if s.dec.State == StateWaiting {
		res.Requeue = s.waitForValues()
	}
	a := actionFor(s.dec)
	if err := s.hooksBefore(ctx, a); err != nil {
		return s.hookFailed(res, phaseOf(a.hooksBefore(s)), err), nil
	}
	if a != nil {
		res.Ran = a.kind()
		res.ActionErr, err = s.act(ctx, a)
		if err != nil {
			return res, err
		}
		if fe, ok := helm.IsForged(res.ActionErr); ok { // Helm read a forged revision: the next step leaves the release alone
			e.foundForged(releaseKey(s.d.ref), fe)
		}
		res.Requeue = afterActionRequeue
		if ender, ok := a.(deletionEnder); ok && res.ActionErr == nil && ender.endsDeletion(s) {
			res.Finished, res.Requeue = true, 0
		}
	} else if !s.dec.BackingOff && (s.dec.State == StateInSync || s.dec.State == StateUnready) {
		hr, err := s.chain.PostRelease(ctx, s.hookRequest(), s.postRelease())
		if err != nil {
			return s.hookFailed(res, phasePostRelease, err), nil
		}
		s.backoffCleared(phasePostRelease)
		if hr.RequeueAfter > 0 && (res.Requeue == 0 || hr.RequeueAfter < res.Requeue) {
			res.Requeue = hr.RequeueAfter
		}
	}
	s.summarize(res)
	s.tracked(res)
	res.Requeue, res.Causes = s.stepPodsRecheck(res), s.podCauses()
	res.Requeue = requeue(res, t.Watch)
	metrics.States.Set(resourceOf(obj).key(), t.Watch.Kind, string(s.dec.State))
	if res.Finished {
		e.ForgetResource(resourceOf(obj))
		if !s.o.Owner.refused() { // the memory of another's release stays
			e.Forget(s.d.ref)
		}
	}
	return res, nil
}

// hooksBefore runs the hooks due before the decided action (the action
// says which): PreRelease before an install or upgrade, BeforeUninstall
// before the uninstall of a deleted resource.
func (s *step) hooksBefore(ctx context.Context, a action) error {
	if a == nil {
		return nil
	}
	var err error
	switch a.hooksBefore(s) {
	case preReleaseHooks:
		_, err = s.chain.PreRelease(ctx, s.hookRequest(), s.d.values)
	case beforeUninstallHooks:
		if s.dec.SkipHooks {
			s.skippedUninstallHooks()
			return nil
		}
		_, err = s.chain.BeforeUninstall(ctx, s.hookRequest())
	}
	return err
}

// skippedUninstallHooks says, in the log and an Event, that the
// BeforeUninstall hooks were skipped on request (if the kind has any).
func (s *step) skippedUninstallHooks() {
	var names []string
	for _, h := range s.chain {
		if _, ok := h.Impl.(hooks.BeforeUninstall); ok {
			names = append(names, h.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	s.e.log.Info("skipping BeforeUninstall hooks on request", "kind", s.obj.GetKind(), "namespace", s.obj.GetNamespace(),
		"name", s.obj.GetName(), "hooks", names, "annotation", api.AnnotationSkipUninstallHooks)
	s.eventf(true, api.ReasonHooksSkipped, "BeforeUninstall hooks %v skipped (annotation %s); uninstalling",
		names, api.AnnotationSkipUninstallHooks)
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

// hookFailed records the failure of a hook of phase: Ready False
// HookFailed, the message naming the hook (and, before an uninstall, the
// annotation that skips the hooks), an Event, and the backoff; the release
// is left as it is. The step is requeued when the backoff has passed (a
// step before then waits: see backoffGate). Secret values are redacted
// from the message everywhere it goes.
func (s *step) hookFailed(res Result, phase string, err error) Result {
	err = s.d.redact.Error(err)
	left := s.backOff(phase, err.Error(), 0)
	msg := err.Error()
	if phase == phaseBeforeUninstall {
		msg += skipHooksHint
	}
	s.setReadiness(verdict{reason: api.ReasonHookFailed, message: msg})
	s.eventf(true, api.ReasonHookFailed, "%s; next attempt in %s", msg, left.Round(time.Second))
	res.Requeue = requeue(Result{Requeue: left}, s.t.Watch)
	return res
}
