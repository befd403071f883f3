package chaos

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// statusFailed is Helm's status of a failed revision (and of one unlocked).
const statusFailed = "failed"

// unlockAfter is the chaos watch's timeout: a revision left pending this
// long is taken as abandoned and unlocked (marked failed).
const unlockAfter = 20 * time.Second

// killMidUnlock leaves a revision pending with a kill mid-upgrade (returned
// as a fault of its own), waits for the next operator to unlock it (the
// pending revision turns failed, before it is remediated), and SIGKILLs
// the operator then: the unlock done, its remediation not.
func (in *injector) killMidUnlock(ctx context.Context, f *Fault) ([]Fault, error) {
	s, err := in.released(ctx)
	if err != nil {
		return nil, err
	}
	in.w.setBusy(s, true)
	defer in.w.setBusy(s, false)
	setUp := Fault{Kind: KillMidUpgrade, At: in.now()}
	big := in.w.next(in.r, in.cfg.MaxConfigMaps)
	big.ConfigMaps, big.Hook = in.cfg.MaxConfigMaps, true
	if err := in.w.patch(ctx, s, big, "update"); err != nil {
		return nil, err
	}
	setUp.Target, f.Target = s.key.String(), s.key.String()
	_, aerr := in.await(ctx, s.key, statusPendingUpgrade)
	if err := in.kill(ctx, &setUp, s.key); err != nil {
		return nil, fmt.Errorf("%w (%v)", err, aerr)
	}
	left := time.Now()
	setUp.Caught = setUp.AfterKill == statusPendingUpgrade
	setUp.Detail = "to leave a revision to unlock: left " + setUp.AfterKill
	before := []Fault{setUp}
	h, err := releaseHistory(ctx, in.cs, s.key)
	if err != nil || !pending(h.LatestStatus) {
		f.Detail = "nothing to unlock: the set-up kill left " + setUp.AfterKill
		return before, nil
	}
	// Nothing is unlocked before the watch's timeout: wait till then. The
	// restarted operator re-reconciles everything at a low priority, so
	// the release would wait its turn: once it counts as abandoned, ask for
	// a reconcile (a change of the resource comes first).
	sleep(ctx, time.Until(left.Add(unlockAfter-2*time.Second)))
	rev := h.Latest
	deadline := time.Now().Add(in.cfg.CatchTimeout + time.Minute)
	seen, asked := false, false
	for !seen && time.Now().Before(deadline) && ctx.Err() == nil {
		if !asked && time.Since(left) > unlockAfter+time.Second {
			asked = in.requestReconcile(ctx, s) == nil
		}
		h, err = releaseHistory(ctx, in.cs, s.key)
		seen = err == nil && (h.Latest != rev || !pending(h.LatestStatus))
		if !seen {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := in.kill(ctx, f, s.key); err != nil {
		return before, err
	}
	after, _ := releaseHistory(ctx, in.cs, s.key)
	f.Caught = after.Latest == rev && f.AfterKill == statusFailed
	switch {
	case f.Caught:
		f.Detail = fmt.Sprintf("killed right after revision %d was unlocked (marked failed), before its remediation", rev)
	case seen:
		f.Detail = fmt.Sprintf("saw revision %d unlocked, but the kill left revision %d %s", rev, after.Latest, f.AfterKill)
	default:
		f.Detail = fmt.Sprintf("revision %d not unlocked in time; left %s", rev, f.AfterKill)
	}
	return before, nil
}

// watchConfigMaps watches the released ConfigMaps of ns from now on (no
// events for what exists already), for at most timeout.
func (in *injector) watchConfigMaps(ctx context.Context, ns string, timeout time.Duration) (watch.Interface, context.CancelFunc, error) {
	sel := metav1.ListOptions{LabelSelector: api.LabelManaged + "=true", Limit: 1}
	list, err := in.cs.CoreV1().ConfigMaps(ns).List(ctx, sel)
	if err != nil {
		return nil, nil, err
	}
	sel.Limit, sel.ResourceVersion = 0, list.ResourceVersion
	wctx, cancel := context.WithTimeout(ctx, timeout)
	wi, err := in.cs.CoreV1().ConfigMaps(ns).Watch(wctx, sel)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return wi, func() { wi.Stop(); cancel() }, nil
}

// firstEvent returns the name of the first ConfigMap of an event of type t
// for which match holds, or "" if the watch ends first.
func firstEvent(wi watch.Interface, t watch.EventType, match func(*corev1.ConfigMap) bool) string {
	for ev := range wi.ResultChan() {
		if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == t && match(cm) {
			return cm.Name
		}
	}
	return ""
}

// killMidUninstall deletes a released custom resource, watches its
// release's ConfigMaps, and SIGKILLs the operator once Helm deletes the
// first one: the uninstall begun, its release record not yet purged.
// (chartkeeper records an uninstall once, with its outcome, so there is no
// "uninstalling" revision to wait for.)
func (in *injector) killMidUninstall(ctx context.Context, f *Fault) error {
	// The more objects, the longer the uninstall.
	s, err := in.releasedWhere(ctx, func(s *slot) bool { return s.spec.ConfigMaps >= in.cfg.MaxConfigMaps/2 })
	if err != nil {
		if s, err = in.released(ctx); err != nil {
			return err
		}
	}
	in.w.setBusy(s, true)
	defer in.w.setBusy(s, false)
	wi, stop, err := in.watchConfigMaps(ctx, s.key.Namespace, in.cfg.CatchTimeout)
	if err != nil {
		return err
	}
	defer stop()
	if err := in.w.remove(ctx, s); err != nil {
		return err
	}
	f.Target = s.key.String()
	owner := ownerKey(*s)
	seen := firstEvent(wi, watch.Deleted, func(cm *corev1.ConfigMap) bool {
		return cm.Annotations[api.AnnotationOwner] == owner && !kept(cm)
	})
	if err := in.kill(ctx, f, s.key); err != nil {
		return err
	}
	f.Caught = seen != "" && f.AfterKill != statusNone
	switch {
	case f.Caught:
		f.Detail = fmt.Sprintf("killed once %s was deleted, the release still recorded (%s)", seen, f.AfterKill)
	case seen != "":
		f.Detail = fmt.Sprintf("saw %s deleted, but the kill came after the uninstall", seen)
	default:
		f.Detail = fmt.Sprintf("no released ConfigMap deleted within %s; left %s", in.cfg.CatchTimeout, f.AfterKill)
	}
	return nil
}

// killMidDrift deletes the ConfigMaps of a release that is Ready and as
// its spec asks, behind Helm's back; asks for a reconcile (the annotation
// chartkeeper.dev/reconcile-requested-at, so that the correction does not
// wait behind a restarted operator's low-priority backlog); watches for the
// operator re-creating them (drift correction restores one object after
// the other), and SIGKILLs it at the first one back: the correction half
// done.
func (in *injector) killMidDrift(ctx context.Context, f *Fault) error {
	// The more ConfigMaps, the longer the correction takes.
	s := in.w.pickWhere(in.r, func(s *slot) bool { return s.live && s.spec.ConfigMaps >= in.cfg.MaxConfigMaps/2 })
	if s == nil || !in.readyAsSpecified(ctx, s) {
		return errNoTarget
	}
	in.w.setBusy(s, true)
	defer in.w.setBusy(s, false)
	ns, name := s.key.Namespace, s.key.Name
	wi, stop, err := in.watchConfigMaps(ctx, ns, in.cfg.CatchTimeout)
	if err != nil {
		return err
	}
	defer stop()
	names := []string{name + "-config"}
	for i := range s.spec.ConfigMaps {
		names = append(names, fmt.Sprintf("%s-extra-%d", name, i))
	}
	cms := in.cs.CoreV1().ConfigMaps(ns)
	deleted := map[string]bool{}
	for _, n := range names {
		if err := cms.Delete(ctx, n, metav1.DeleteOptions{}); err == nil {
			deleted[n] = true
		}
	}
	if len(deleted) == 0 {
		return errNoTarget
	}
	f.Target = fmt.Sprintf("%s (%d ConfigMaps deleted)", s.key, len(deleted))
	if err := in.requestReconcile(ctx, s); err != nil {
		f.Detail = "asking for a reconcile: " + err.Error() // the deletions are drift all the same
	}
	seen := firstEvent(wi, watch.Added, func(cm *corev1.ConfigMap) bool { return deleted[cm.Name] })
	if err := in.kill(ctx, f, s.key); err != nil {
		return err
	}
	restored := 0
	for n := range deleted {
		if _, err := cms.Get(ctx, n, metav1.GetOptions{}); err == nil {
			restored++
		}
	}
	f.AfterKill = fmt.Sprintf("restored %d of %d", restored, len(deleted))
	f.Caught = seen != "" && restored < len(deleted)
	switch {
	case f.Caught:
		f.Detail = fmt.Sprintf("killed once %s was re-created: %d of %d restored", seen, restored, len(deleted))
	case seen != "":
		f.Detail = fmt.Sprintf("saw %s re-created, but the kill came after the correction (%d of %d restored)", seen, restored, len(deleted))
	default:
		f.Detail = strings.TrimPrefix(fmt.Sprintf("%s; no ConfigMap re-created within %s; %d of %d restored", f.Detail, in.cfg.CatchTimeout, restored, len(deleted)), "; ")
	}
	return nil
}

// requestReconcile sets the annotation chartkeeper.dev/reconcile-requested-at:
// the operator reconciles the resource at once (at the priority of a change
// of it), without a change of its spec.
func (in *injector) requestReconcile(ctx context.Context, s *slot) error {
	asked := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, api.AnnotationReconcileRequestedAt, time.Now().Format(time.RFC3339Nano))
	_, err := in.w.client(s).Patch(ctx, s.key.Name, types.MergePatchType, []byte(asked), metav1.PatchOptions{})
	return err
}

// readyAsSpecified: the slot's resource is Ready for its current generation
// and its latest revision is deployed (so that what is released is what
// its spec asks, and the next action on it can only be a drift correction).
func (in *injector) readyAsSpecified(ctx context.Context, s *slot) bool {
	u, err := in.w.client(s).Get(ctx, s.key.Name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	st, err := api.StatusOf(u)
	if err != nil || st.ObservedGeneration != u.GetGeneration() {
		return false
	}
	if c := meta.FindStatusCondition(st.Conditions, api.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		return false
	}
	h, err := releaseHistory(ctx, in.cs, s.key)
	return err == nil && h.LatestStatus == statusDeployed
}

// killMidHook installs or upgrades a release whose chart runs a hook (the
// hooked kind's, or any kind's with the hook turned on), watches the hook's
// ConfigMap appear with the new revision's data, and SIGKILLs the operator
// then: the hook run, the release's own objects not yet applied.
func (in *injector) killMidHook(ctx context.Context, f *Fault) error {
	hooked := func(s *slot) bool { return s.kind.hooked }
	if !in.w.anyWhere(hooked) {
		hooked = func(*slot) bool { return true }
	}
	big := in.w.next(in.r, in.cfg.MaxConfigMaps)
	big.ConfigMaps, big.Hook = in.cfg.MaxConfigMaps, true
	var want string
	s := (*slot)(nil)
	if in.r.IntN(2) == 0 {
		s = in.w.pickWhere(in.r, func(s *slot) bool { return !s.live && hooked(s) })
	}
	if s != nil && in.w.gone(ctx, s) {
		in.w.setBusy(s, true)
		defer in.w.setBusy(s, false)
		want = statusPendingInstall
		if err := in.w.create(ctx, s, big); err != nil {
			return err
		}
	} else {
		if s = in.w.pickWhere(in.r, func(s *slot) bool { return s.live && hooked(s) }); s == nil {
			return errNoTarget
		}
		if h, err := releaseHistory(ctx, in.cs, s.key); err != nil || h.LatestStatus != statusDeployed {
			return errNoTarget
		}
		in.w.setBusy(s, true)
		defer in.w.setBusy(s, false)
		want = statusPendingUpgrade
		if err := in.w.patch(ctx, s, big, "update"); err != nil {
			return err
		}
	}
	f.Target = s.key.String() + " (" + want + ")"
	hook := s.key.Name + hookSuffix
	deadline := time.Now().Add(in.cfg.CatchTimeout)
	seen := false
	for !seen && time.Now().Before(deadline) && ctx.Err() == nil {
		cm, err := in.cs.CoreV1().ConfigMaps(s.key.Namespace).Get(ctx, hook, metav1.GetOptions{})
		seen = err == nil && cm.Data["data"] == big.Data
		if !seen {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := in.kill(ctx, f, s.key); err != nil {
		return err
	}
	f.Caught = seen && f.AfterKill == want
	switch {
	case f.Caught:
		f.Detail = "killed once the hook ran, while " + want
	case seen:
		f.Detail = "saw the hook run, but the kill left " + f.AfterKill
	default:
		f.Detail = fmt.Sprintf("the hook did not run within %s; left %s", in.cfg.CatchTimeout, f.AfterKill)
	}
	return nil
}
