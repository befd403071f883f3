package release

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/chartkeeper/chartkeeper/internal/values"
)

// podWorld is a StatefulSet not ready (db, selector app=db) and Pods: its
// own db-0, a Pod of another StatefulSet under the same labels, and one of
// other labels; lists counts the Pod lists made.
type podWorld struct {
	c     client.WithWatch
	e     *Engine
	clock *clocktesting.FakeClock
	lists int
	// forbid makes Pod lists forbidden.
	forbid bool
}

var stsGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}

func stsPod(name, ownerUID string, lbl map[string]string, st corev1.PodStatus) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: lbl}, Status: st}
	if ownerUID != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "x", UID: types.UID(ownerUID), Controller: ptr.To(true)}}
	}
	return p
}

func unschedulableStatus(msg string) corev1.PodStatus {
	return corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: msg}}}
}

func newPodWorld(t *testing.T) *podWorld {
	t.Helper()
	w := &podWorld{clock: clocktesting.NewFakeClock(t0)}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "uid-db", Generation: 1},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 1},
	}
	db := map[string]string{"app": "db"}
	w.c = fake.NewClientBuilder().WithObjects(sts,
		stsPod("db-0", "uid-db", db, unschedulableStatus("0/3 nodes are available: 3 Insufficient ephemeral-storage.")),
		stsPod("a-other-0", "uid-other", db, unschedulableStatus("not this one")),
		stsPod("web-0", "", map[string]string{"app": "web"}, unschedulableStatus("nor this one")),
	).WithStatusSubresource(sts, &corev1.Pod{}).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*corev1.PodList); ok {
				w.lists++
				if w.forbid {
					return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
				}
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	w.e = &Engine{meta: w.c, live: w.c, clock: w.clock, log: logr.Discard(), ready: newObjectMemo[readyAt](), podChecks: newObjectMemo[podCheck]()}
	return w
}

// look reads db's readiness as a step does.
func (w *podWorld) look(t *testing.T, ctx context.Context) readyAt {
	t.Helper()
	ob := object{GVK: stsGVK, Namespace: "ns", Name: "db", needsStatus: true}
	m, err := w.e.metaOf(ctx, ob, true)
	if err != nil || m == nil {
		t.Fatalf("metadata of db: %v", err)
	}
	r, err := w.e.readinessOf(ctx, "ns/rel", ob, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (w *podWorld) setPod(t *testing.T, name string, st corev1.PodStatus) {
	t.Helper()
	p := &corev1.Pod{}
	if err := w.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, p); err != nil {
		t.Fatal(err)
	}
	p.Status = st
	if err := w.c.Status().Update(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// A StatefulSet that is not ready says why its Pod does not run: the
// scheduler's message of its own Pod (not another's under the same
// labels). Its Pods are first listed once it has been found not ready and
// unchanged for podRecheck, then not again before podRecheck, each wait
// twice the last while nothing changes (up to podRecheckMax), podRecheck
// after the reason changed; a workload that keeps changing (a rollout
// that progresses) lists nothing, and what its Pods said goes with the
// change; once ready, nothing is listed and nothing remembered.
func TestPodReasonOfAWorkloadNotReady(t *testing.T) {
	w := newPodWorld(t)
	ctx := context.Background()
	r := w.look(t, ctx)
	if r.current || r.why != "StatefulSet db: InProgress: Ready: 0/1" || w.lists != 0 || !r.recheck.Equal(t0.Add(podRecheck)) {
		t.Fatalf("just found not ready: %+v after %d lists (want none, and a recheck at t0+%s)", r, w.lists, podRecheck)
	}
	w.clock.Step(podRecheck)
	r = w.look(t, ctx)
	want := "StatefulSet db: InProgress: Ready: 0/1 (Pod db-0: PodScheduled=False: Unschedulable: 0/3 nodes are available: 3 Insufficient ephemeral-storage.)"
	if r.current || r.why != want || r.cause == "" || !strings.Contains(want, r.cause) {
		t.Fatalf("got %v %q (cause %q)\nwant %q", r.current, r.why, r.cause, want)
	}
	if next := t0.Add(2 * podRecheck); w.lists != 1 || !r.recheck.Equal(next) {
		t.Fatalf("lists %d, recheck at %v (want 1, t0+%s)", w.lists, r.recheck.Sub(t0), next.Sub(t0))
	}

	// Steps between two rechecks list nothing, and still say why.
	w.clock.Step(podRecheck - time.Millisecond)
	if r = w.look(t, ctx); w.lists != 1 || !strings.Contains(r.why, "Insufficient ephemeral-storage") {
		t.Fatalf("lists %d, why %q", w.lists, r.why)
	}
	// Nothing changes: the waits double, up to the bound.
	waits := []time.Duration{}
	for range 6 {
		w.clock.SetTime(r.recheck)
		before := w.lists
		r = w.look(t, ctx)
		if w.lists != before+1 {
			t.Fatalf("no list when due at %v", w.clock.Now().Sub(t0))
		}
		waits = append(waits, r.recheck.Sub(w.clock.Now()))
	}
	wantWaits := []time.Duration{2 * podRecheck, 4 * podRecheck, min(8*podRecheck, podRecheckMax), podRecheckMax, podRecheckMax, podRecheckMax}
	if !equalDurations(waits, wantWaits) {
		t.Errorf("waits %v, want %v", waits, wantWaits)
	}

	// The Pod's reason changes: read at the next recheck, and the wait is
	// podRecheck again.
	w.setPod(t, "db-0", corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "db", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "db:9"`}}}}})
	w.clock.SetTime(r.recheck)
	r = w.look(t, ctx)
	if !strings.HasSuffix(r.why, `(Pod db-0: container db: ImagePullBackOff: Back-off pulling image "db:9")`) || r.recheck.Sub(w.clock.Now()) != podRecheck {
		t.Errorf("after the Pod changed: %q, next in %s", r.why, r.recheck.Sub(w.clock.Now()))
	}

	// The workload changes (a status update): its Pods are read
	// podRecheck after the last read, not after the grown wait.
	for range 3 {
		w.clock.SetTime(r.recheck)
		r = w.look(t, ctx)
	}
	last := w.clock.Now()
	sts := &appsv1.StatefulSet{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "db"}, sts); err != nil {
		t.Fatal(err)
	}
	sts.Status.CurrentRevision = "db-2"
	if err := w.c.Status().Update(ctx, sts); err != nil {
		t.Fatal(err)
	}
	if r = w.look(t, ctx); !r.recheck.Equal(last.Add(podRecheck)) || r.cause != "" {
		t.Errorf("after the workload changed, recheck in %s (want %s after the change), cause %q (want none)", r.recheck.Sub(last), podRecheck, r.cause)
	}
	// It keeps changing, each time before the poll is over: no list.
	before := w.lists
	for _, rev := range []string{"db-3", "db-4", "db-5"} {
		w.clock.Step(podRecheck - time.Second)
		sts.Status.CurrentRevision = rev
		if err := w.c.Status().Update(ctx, sts); err != nil {
			t.Fatal(err)
		}
		r = w.look(t, ctx)
	}
	if w.lists != before || !r.recheck.Equal(w.clock.Now().Add(podRecheck)) {
		t.Errorf("a workload changing every %s: %d lists (want none), recheck in %s", podRecheck-time.Second, w.lists-before, r.recheck.Sub(w.clock.Now()))
	}

	// Ready: no list, no reason, nothing remembered.
	sts.Status.ReadyReplicas, sts.Status.AvailableReplicas, sts.Status.CurrentReplicas, sts.Status.UpdatedReplicas = 1, 1, 1, 1
	sts.Status.UpdateRevision = sts.Status.CurrentRevision
	if err := w.c.Status().Update(ctx, sts); err != nil {
		t.Fatal(err)
	}
	w.clock.Step(time.Hour)
	before = w.lists
	if r = w.look(t, ctx); !r.current || r.why != "" || !r.recheck.IsZero() || w.lists != before {
		t.Errorf("ready: %+v, %d more lists", r, w.lists-before)
	}
	if _, ok := w.e.podChecks.get("ns/rel", "uid-db"); ok {
		t.Error("the Pods' check of a ready workload is still remembered")
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A Pod list the operator may not make leaves the readiness line as
// kstatus wrote it, and the step goes on (no error).
func TestPodReasonForbiddenFallsBack(t *testing.T) {
	w := newPodWorld(t)
	w.forbid = true
	w.look(t, context.Background())
	w.clock.Step(podRecheck)
	r := w.look(t, context.Background())
	if r.current || r.why != "StatefulSet db: InProgress: Ready: 0/1" || w.lists != 1 {
		t.Errorf("got %+v after %d lists", r, w.lists)
	}
}

// What Pods say is redacted with the step's redactor before it is kept.
func TestPodReasonRedacted(t *testing.T) {
	w := newPodWorld(t)
	secret := "s3cr3t-registry-token-value"
	w.setPod(t, "db-0", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "db",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "pull https://user:" + secret + "@registry.example/db: unauthorized"}}}}})
	ctx := withRedactor(context.Background(), values.NewRedactor([]string{secret}))
	w.look(t, ctx)
	w.clock.Step(podRecheck)
	r := w.look(t, ctx)
	if strings.Contains(r.why, secret) || !strings.Contains(r.why, "ErrImagePull: pull https://user:"+values.Redacted+"@registry.example/db") {
		t.Errorf("not redacted: %q", r.why)
	}
}

// A workload with no selector (or an empty one, which would select every
// Pod of the namespace) has no Pods listed.
func TestPodReasonNeedsASelector(t *testing.T) {
	w := newPodWorld(t)
	sts := &appsv1.StatefulSet{}
	if err := w.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "db"}, sts); err != nil {
		t.Fatal(err)
	}
	sts.Spec.Selector = &metav1.LabelSelector{}
	if err := w.c.Update(context.Background(), sts); err != nil {
		t.Fatal(err)
	}
	w.look(t, context.Background())
	w.clock.Step(podRecheck)
	if r := w.look(t, context.Background()); w.lists != 0 || r.why != "StatefulSet db: InProgress: Ready: 0/1" {
		t.Errorf("got %q after %d lists", r.why, w.lists)
	}
}

// An unready release that ran no action is stepped again when the Pods
// of one of its workloads are due, if that is sooner than it asked.
func TestStepPodsRecheck(t *testing.T) {
	clk := clocktesting.NewFakeClock(t0)
	objs := []observedObject{{recheck: t0.Add(20 * time.Second)}, {recheck: t0.Add(5 * time.Second)}, {}}
	for _, c := range []struct {
		name  string
		state State
		ran   ActionKind
		asked time.Duration
		want  time.Duration
	}{
		{"unready, no requeue asked", StateUnready, ActionNone, 0, 5 * time.Second},
		{"unready, a sooner requeue asked", StateUnready, ActionNone, time.Second, time.Second},
		{"unready, the readiness timeout later", StateUnready, ActionNone, 4 * time.Minute, 5 * time.Second},
		{"in sync", StateInSync, ActionNone, 0, 0},
		{"an action ran", StateUnready, ActionRollback, afterActionRequeue, afterActionRequeue},
	} {
		s := &step{e: &Engine{clock: clk}, dec: Decision{State: c.state}, o: Observation{Objects: objs}}
		if got := s.stepPodsRecheck(Result{Ran: c.ran, Requeue: c.asked}); got != c.want {
			t.Errorf("%s: requeue %s, want %s", c.name, got, c.want)
		}
	}
}

// A bare Pod that is not ready is read itself, with the claim it waits for.
func TestPodReasonOfABarePod(t *testing.T) {
	w := newPodWorld(t)
	ctx := context.Background()
	solo := stsPod("solo", "", nil, unschedulableStatus("0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims."))
	solo.Spec.Containers = []corev1.Container{{Name: "c", Image: "i"}}
	solo.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-solo"}}}}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-solo"}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
	for _, o := range []client.Object{solo, claim} {
		if err := w.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	w.setPod(t, "solo", solo.Status)
	ob := object{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Pod"}, Namespace: "ns", Name: "solo", needsStatus: true}
	m, err := w.e.metaOf(ctx, ob, true)
	if err != nil || m == nil {
		t.Fatalf("metadata of solo: %v", err)
	}
	var r readyAt
	for range 2 { // found not ready, then its Pods due
		if r, err = w.e.readinessOf(ctx, "ns/rel", ob, m, nil); err != nil {
			t.Fatal(err)
		}
		w.clock.Step(podRecheck)
	}
	want := "(Pod solo: PodScheduled=False: Unschedulable: 0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. (PersistentVolumeClaim data-solo is Pending, not bound))"
	if !strings.HasSuffix(r.why, want) || w.lists != 0 {
		t.Errorf("got %q after %d lists\nwant it to end with %q, read without a list", r.why, w.lists, want)
	}
}
