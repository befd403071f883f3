package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// The annotations under test, spelled out as a user writes them.
const (
	annReconcileRequestedAt = "chartkeeper.dev/reconcile-requested-at"
	annSuspend              = "chartkeeper.dev/suspend"
)

// annotate merges annotations into a custom resource's (a nil value
// removes the annotation).
func annotate(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string, anns map[string]any) {
	t.Helper()
	u := newCR(gvk, ns, name, nil)
	b := fmt.Sprintf(`{"metadata":{"annotations":%s}}`, mustJSON(anns))
	if err := env.Client.Patch(context.Background(), u, client.RawPatch(types.MergePatchType, []byte(b))); err != nil {
		t.Fatal(err)
	}
}

// latestRevision is the newest stored revision of a release (0: none).
func latestRevision(t *testing.T, env *testenv.Env, ns, name string) int {
	t.Helper()
	best := 0
	for _, s := range releaseSecrets(t, env, ns, name) {
		var v int
		fmt.Sscan(s.Labels["version"], &v)
		best = max(best, v)
	}
	return best
}

// A resource whose install keeps failing for a cause outside its spec (a
// ResourceQuota that allows no Service) stalls with RetriesExhausted. Once
// the cause is gone, it stays Stalled; setting reconcile-requested-at gives
// it a fresh retry budget: it installs, becomes Ready, and
// status.lastHandledReconcileAt shows the value.
func TestReconcileRequestRetriesAStalledResource(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := appFixture(t, testWatches())
	ctx := context.Background()
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-services"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceServices: resource.MustParse("0")}}}
	if err := env.Client.Create(ctx, quota); err != nil {
		t.Fatal(err)
	}
	// The quota admits nothing until its controller has counted usage.
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		q := &corev1.ResourceQuota{}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(quota), q); err != nil {
			return err
		}
		if _, ok := q.Status.Hard[corev1.ResourceServices]; !ok {
			return fmt.Errorf("quota not counted yet: %+v", q.Status)
		}
		return nil
	})
	if err := env.Client.Create(ctx, newApp(ns, "blocked", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		_, st, err := getApp(ctx, env, ns, "blocked")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionStalled); c.Status != metav1.ConditionTrue || c.Reason != string(api.ReasonRetriesExhausted) {
			return fmt.Errorf("not Stalled RetriesExhausted: %+v", st.Conditions)
		}
		return nil
	})

	// Fix the cause outside the spec, and wait until the API server admits a Service.
	if err := env.Client.Delete(ctx, quota); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "probe"},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
		return env.Client.Create(ctx, svc, client.DryRunAll)
	})
	_, st, err := getApp(ctx, env, ns, "blocked")
	if err != nil {
		t.Fatal(err)
	}
	if c := condition(st, api.ConditionStalled); c.Status != metav1.ConditionTrue {
		t.Fatalf("Stalled went away on its own: %+v", st.Conditions)
	}

	const requested = "2026-11-23T13:30:00Z"
	annotate(t, env, appGVK, ns, "blocked", map[string]any{annReconcileRequestedAt: requested})
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		u, st, err := getApp(ctx, env, ns, "blocked")
		if err != nil {
			return err
		}
		handled, _, _ := unstructured.NestedString(u.Object, "status", "lastHandledReconcileAt")
		if handled != requested {
			return fmt.Errorf("status.lastHandledReconcileAt = %q, want %q", handled, requested)
		}
		if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionTrue {
			return fmt.Errorf("not Ready: %+v", st.Conditions)
		}
		return nil
	})
}

// suspended waits until the App says it is suspended for its current
// generation: Ready False Suspended, neither Stalled nor Reconciling.
func suspended(t *testing.T, env *testenv.Env, ns, name string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		u, st, err := getApp(ctx, env, ns, name)
		if err != nil {
			return err
		}
		ready := condition(st, api.ConditionReady)
		if ready.Status != metav1.ConditionFalse || ready.Reason != "Suspended" || st.ObservedGeneration != u.GetGeneration() {
			return fmt.Errorf("not suspended at generation %d: %+v", u.GetGeneration(), st.Conditions)
		}
		if !strings.Contains(ready.Message, annSuspend) {
			return fmt.Errorf("the message does not say how to resume: %q", ready.Message)
		}
		for _, typ := range []string{api.ConditionStalled, api.ConditionReconciling} {
			if c := condition(st, typ); c.Status == metav1.ConditionTrue {
				return fmt.Errorf("suspended but %s: %+v", typ, c)
			}
		}
		return nil
	})
}

// While chartkeeper.dev/suspend is "true", a spec change makes no new
// revision; removing it releases the change. Deleting a suspended
// resource still uninstalls its release.
func TestSuspendHoldsTheReleaseAndDeletionStillUninstalls(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := appFixture(t, testWatches())
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "held", map[string]any{"data": "v1"})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "held", 1)

	annotate(t, env, appGVK, ns, "held", map[string]any{annSuspend: "true"})
	suspended(t, env, ns, "held")
	patchSpec(t, env, ns, "held", map[string]any{"data": "v2"})
	suspended(t, env, ns, "held") // seen for the new generation
	if rev := latestRevision(t, env, ns, "held"); rev != 1 {
		t.Fatalf("a suspended resource was released again: latest revision %d", rev)
	}
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "held-config"}, cm); err != nil || cm.Data["data"] != "v1" {
		t.Fatalf("held-config: %v, data %q, want v1", err, cm.Data["data"])
	}

	annotate(t, env, appGVK, ns, "held", map[string]any{annSuspend: nil})
	waitReady(t, env, ns, "held", 2)

	annotate(t, env, appGVK, ns, "held", map[string]any{annSuspend: "true"})
	suspended(t, env, ns, "held")
	if err := env.Client.Delete(ctx, newApp(ns, "held", nil)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		if _, _, err := getApp(ctx, env, ns, "held"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("App still there (err=%v)", err)
		}
		if n := len(releaseSecrets(t, env, ns, "held")); n > 0 {
			return fmt.Errorf("%d release revisions left", n)
		}
		return nil
	})
}

// helm-operator-plugins' per-resource annotations: install-disable-hooks
// is honoured (the post-install hook Job, which would never complete, is
// not run: the install succeeds at once), and an annotation of its domain
// chartkeeper does not know is refused with a condition naming it, before
// anything is installed.
func TestHelmOperatorAnnotations(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := kindFixture(t, timeoutWatches(), hookAppGVK)
	ctx := context.Background()

	nohooks := newCR(hookAppGVK, ns, "nohooks", map[string]any{})
	nohooks.SetAnnotations(map[string]string{"helm.sdk.operatorframework.io/install-disable-hooks": "true"})
	if err := env.Client.Create(ctx, nohooks); err != nil {
		t.Fatal(err)
	}
	const unknown = "helm.sdk.operatorframework.io/rollback-disable-hooks"
	refused := newCR(hookAppGVK, ns, "refused", map[string]any{"hook": false})
	refused.SetAnnotations(map[string]string{unknown: "true"})
	if err := env.Client.Create(ctx, refused); err != nil {
		t.Fatal(err)
	}

	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		u, st, err := getCR(ctx, env, hookAppGVK, ns, "nohooks")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionTrue || st.ObservedGeneration != u.GetGeneration() {
			return fmt.Errorf("nohooks not Ready: %+v", st.Conditions)
		}
		return nil
	})
	err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "nohooks-post-install"}, &batchv1.Job{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("the hook Job was created (err=%v)", err)
	}

	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, env, hookAppGVK, ns, "refused")
		if err != nil {
			return err
		}
		c := condition(st, api.ConditionStalled)
		if c.Status != metav1.ConditionTrue || c.Reason != "AnnotationRefused" || !strings.Contains(c.Message, unknown) {
			return fmt.Errorf("not Stalled AnnotationRefused naming %s: %+v", unknown, st.Conditions)
		}
		return nil
	})
	if n := len(releaseSecrets(t, env, ns, "refused")); n > 0 {
		t.Errorf("refused was installed: %d revisions", n)
	}
}
