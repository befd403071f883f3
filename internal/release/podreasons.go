package release

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/readiness"
	"github.com/chartkeeper/chartkeeper/internal/values"
)

// Why a released workload is not ready: the first blocking reason its
// Pods give (readiness.PodReason: unschedulable with the scheduler's
// message, an unbound claim, ImagePullBackOff, CrashLoopBackOff, ...) is
// added to its readiness line, so Ready's message says it
// (docs/conditions.md, Why Pods wait). No Pod is watched: a workload's
// Pods are listed by its selector, in its namespace, a few at most, only
// while it is not ready and stands still: first once it has not changed
// for podRecheck (a rollout that progresses changes its status, and lists
// no Pod: make bench counted 3.2 lists per resource in an upgrade when
// every unready workload's Pods were read), then each wait twice the last
// while nothing changes; a change of the workload starts over. The
// step of an unready release comes back when they are due
// (stepPodsRecheck), as no Pod event would bring it, and the controller
// writes a new reason at once (Result.Causes). A list the operator may not
// make (or that fails) leaves the readiness line as it was: the step goes
// on.

const (
	// podRecheck is the readiness poll of a workload that is not ready:
	// its Pods are read once it has not changed for this long, and at
	// most this often. 10 s, not 5: on a saturated control plane a
	// rollout often pauses 5 s between two status updates, and make bench
	// counted 2.5 lists per resource in an upgrade at 5 s.
	podRecheck = 10 * time.Second
	// podRecheckMax bounds the poll's growth: while neither the workload
	// nor its Pods' reason change, each wait is twice the last, up to this.
	podRecheckMax = time.Minute
	// podListLimit is how many of a workload's Pods are read (one page).
	podListLimit = 5
	// podClaimsMax is how many PersistentVolumeClaims of unscheduled Pods
	// are read per look.
	podClaimsMax = 2
)

// podCheck is what the last look at a workload's Pods found.
type podCheck struct {
	rv     string // the workload's resourceVersion then
	reason string
	at     time.Time     // when the Pods were read (or the workload last changed)
	delay  time.Duration // until the next read, while the workload is unchanged
}

// due is when the workload's Pods are read again, unless it changes first.
func (c podCheck) due() time.Time { return c.at.Add(c.delay) }

// next is the check made at now that found reason, following c (the
// workload unchanged since).
func (c podCheck) next(now time.Time, reason string) podCheck {
	delay := podRecheck
	if c.reason == reason {
		delay = min(2*c.delay, podRecheckMax)
	}
	return podCheck{rv: c.rv, reason: reason, at: now, delay: delay}
}

// withPodReason adds to r, the readiness of a released object, the reason
// its Pods give when it is a workload that is not ready, read anew when
// due; r.recheck says when they are due next.
func (e *Engine) withPodReason(ctx context.Context, key string, ob object, m *metav1.PartialObjectMetadata, r readyAt) readyAt {
	if !readiness.RunsPods(ob.GVK.GroupKind()) {
		return r
	}
	uid, rv := m.GetUID(), m.GetResourceVersion()
	if r.current {
		e.podChecks.drop(key, uid)
		return r
	}
	now := e.clock.Now()
	c, seen := e.podChecks.get(key, uid)
	switch {
	case !seen || c.rv != rv:
		// Just found not ready, or changed since (what its Pods said may
		// be over): read them once it has stood still for one poll.
		c = podCheck{rv: rv, at: now, delay: podRecheck}
		e.podChecks.set(key, uid, c)
	case !now.Before(c.due()):
		c = c.next(now, e.podReason(ctx, ob, m))
		e.podChecks.set(key, uid, c)
	}
	if c.reason != "" {
		r.why += " (" + c.reason + ")"
		r.cause = c.reason
	}
	r.recheck = c.due()
	return r
}

// podReason reads a workload's Pods (and the claims of those not
// scheduled) and returns why they do not run; "" when they say nothing or
// cannot be read.
func (e *Engine) podReason(ctx context.Context, ob object, m *metav1.PartialObjectMetadata) string {
	pods, err := e.podsOf(ctx, ob, m)
	if err != nil {
		e.log.V(1).Info("cannot read the Pods of a workload that is not ready", "object", ob.String(), "error", err.Error())
		return ""
	}
	return readiness.PodReason(pods, e.claimsOf(ctx, pods), redactorOf(ctx).Redact)
}

type redactorKey struct{}

// withRedactor carries the step's redactor to the readiness read while
// observing: what Pods say is redacted before it is cut (a cut secret
// would no longer be recognised) and remembered.
func withRedactor(ctx context.Context, r *values.Redactor) context.Context {
	return context.WithValue(ctx, redactorKey{}, r)
}

// redactorOf is the step's redactor (nil, which redacts nothing, outside a step).
func redactorOf(ctx context.Context) *values.Redactor {
	r, _ := ctx.Value(redactorKey{}).(*values.Redactor)
	return r
}

// podsOf lists a workload's Pods by its selector (a bare Pod is read
// itself), a few at most, leaving out those another controller owns.
func (e *Engine) podsOf(ctx context.Context, ob object, m *metav1.PartialObjectMetadata) ([]corev1.Pod, error) {
	if ob.GVK.Group == "" && ob.GVK.Kind == "Pod" {
		p := &corev1.Pod{}
		if err := e.live.Get(ctx, client.ObjectKey{Namespace: ob.Namespace, Name: ob.Name}, p); err != nil {
			return nil, err
		}
		return []corev1.Pod{*p}, nil
	}
	full, err := e.statusOf(ctx, ob, m)
	if err != nil {
		return nil, err
	}
	sel, err := selectorOf(full)
	if err != nil || sel == nil {
		return nil, err
	}
	list := &corev1.PodList{}
	if err := e.live.List(ctx, list, client.InNamespace(ob.Namespace), client.MatchingLabelsSelector{Selector: sel},
		client.Limit(podListLimit)); err != nil {
		return nil, err
	}
	pods := list.Items[:0]
	for _, p := range list.Items {
		if ownedBy(p, ob.GVK.Kind, m.GetUID()) {
			pods = append(pods, p)
		}
	}
	return pods, nil
}

// selectorOf is a workload's Pod selector; nil when it has none or an
// empty one (which would select every Pod of the namespace).
func selectorOf(u *unstructured.Unstructured) (labels.Selector, error) {
	raw, found, err := unstructured.NestedMap(u.Object, "spec", "selector")
	if err != nil || !found {
		return nil, err
	}
	ls := &metav1.LabelSelector{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, ls); err != nil {
		return nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil || sel.Empty() {
		return nil, err
	}
	return sel, nil
}

// ownedBy reports whether a Pod selected by a workload's selector is that
// workload's: its controller is the workload (a Deployment's Pods are its
// ReplicaSets', which are not read), or it has none.
func ownedBy(p corev1.Pod, kind string, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(&p)
	switch {
	case ref == nil:
		return true
	case kind == "Deployment":
		return ref.Kind == "ReplicaSet"
	}
	return ref.UID == uid
}

// claimsOf reads the PersistentVolumeClaims of the Pods not scheduled
// yet (podClaimsMax at most); those that cannot be read are left out.
func (e *Engine) claimsOf(ctx context.Context, pods []corev1.Pod) []corev1.PersistentVolumeClaim {
	var out []corev1.PersistentVolumeClaim
	seen := map[string]bool{}
	for _, p := range pods {
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim == nil || seen[p.Namespace+"/"+v.PersistentVolumeClaim.ClaimName] {
				continue
			}
			if len(seen) == podClaimsMax {
				return out
			}
			seen[p.Namespace+"/"+v.PersistentVolumeClaim.ClaimName] = true
			c := corev1.PersistentVolumeClaim{}
			if err := e.live.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: v.PersistentVolumeClaim.ClaimName}, &c); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// podCauses are the reasons the step's workloads' Pods gave.
func (s *step) podCauses() []string {
	var out []string
	for _, ob := range s.o.Objects {
		if ob.cause != "" {
			out = append(out, ob.cause)
		}
	}
	return out
}

// stepPodsRecheck is when an unready release that ran no action is
// stepped again: by res.Requeue, or sooner when its workloads' Pods are
// due to be read (no watch on Pods would bring the step).
func (s *step) stepPodsRecheck(res Result) time.Duration {
	after := res.Requeue
	if res.Ran != ActionNone || s.dec.State != StateUnready {
		return after
	}
	now := s.e.clock.Now()
	for _, ob := range s.o.Objects {
		if ob.recheck.IsZero() {
			continue
		}
		if d := max(ob.recheck.Sub(now), 10*time.Millisecond); after == 0 || d < after {
			after = d
		}
	}
	return after
}
