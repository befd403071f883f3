package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A custom resource becomes a Helm release whose Pods run, follows spec
// changes, has deleted and edited objects restored, and leaves nothing
// behind when deleted.
func TestReleaseLifecycle(t *testing.T) {
	parallel(t, 20*time.Second)
	env, ns, _ := appFixture(t, testWatches())
	ctx := context.Background()

	if err := env.Client.Create(ctx, newApp(ns, "web", map[string]any{"replicas": 2})); err != nil {
		t.Fatal(err)
	}
	st := waitReady(t, env, ns, "web", 1)
	if st.ObservedGeneration != 1 || st.Release.Chart != "app" || st.Release.Version != "1.0.0" || st.Release.LastAction != "Install" {
		t.Errorf("status after install: %+v / %+v", st, st.Release)
	}
	if c := condition(st, api.ConditionReleased); c.Status != metav1.ConditionTrue {
		t.Errorf("Released = %+v", c)
	}
	var pods corev1.PodList
	if err := env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": "web"}); err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			running++
		}
	}
	if running != 2 {
		t.Errorf("%d of %d pods Running, want 2", running, len(pods.Items))
	}
	if out := helmCmd(t, env, "list", "-A"); !strings.Contains(out, "web") || !strings.Contains(out, ns) || !strings.Contains(out, "deployed") {
		t.Errorf("helm list -A does not show the release:\n%s", out)
	}

	t.Run("spec change upgrades", func(t *testing.T) {
		patchSpec(t, env, ns, "web", map[string]any{"replicas": 3})
		st := waitReady(t, env, ns, "web", 2)
		if st.ObservedGeneration != 2 || st.Release.LastAction != "Upgrade" {
			t.Errorf("after upgrade: observedGeneration %d, release %+v", st.ObservedGeneration, st.Release)
		}
		dep := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, dep); err != nil || *dep.Spec.Replicas != 3 {
			t.Errorf("deployment replicas: %v (err %v)", dep.Spec.Replicas, err)
		}
	})

	t.Run("deleted object is restored", func(t *testing.T) {
		dep := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, dep); err != nil {
			t.Fatal(err)
		}
		oldUID := dep.UID
		if err := env.Client.Delete(ctx, dep); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
			d := &appsv1.Deployment{}
			if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, d); err != nil {
				return err
			}
			if d.UID == oldUID {
				return fmt.Errorf("not deleted yet")
			}
			return nil
		})
		waitReady(t, env, ns, "web", 2) // restored without a new revision
	})

	t.Run("edited object is restored", func(t *testing.T) {
		// A hand edit, as kubectl scale or edit makes it (a patch: no conflict
		// with the controllers updating the Deployment's status meanwhile).
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
		if err := env.Client.Patch(ctx, dep, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":7}}`))); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
			d := &appsv1.Deployment{}
			if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, d); err != nil {
				return err
			}
			if *d.Spec.Replicas != 3 {
				return fmt.Errorf("replicas %d, want 3 restored", *d.Spec.Replicas)
			}
			return nil
		})
		waitReady(t, env, ns, "web", 2)
	})

	t.Run("delete removes everything", func(t *testing.T) {
		if err := env.Client.Delete(ctx, newApp(ns, "web", nil)); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
			if _, _, err := getApp(ctx, env, ns, "web"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("App still there (err=%v)", err)
			}
			var secrets corev1.SecretList
			if err := env.Client.List(ctx, &secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm"}); err != nil {
				return err
			}
			var cms corev1.ConfigMapList
			if err := env.Client.List(ctx, &cms, client.InNamespace(ns), client.MatchingLabels{api.LabelManaged: "true"}); err != nil {
				return err
			}
			var svcs corev1.ServiceList
			if err := env.Client.List(ctx, &svcs, client.InNamespace(ns), client.MatchingLabels{api.LabelManaged: "true"}); err != nil {
				return err
			}
			err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, &appsv1.Deployment{})
			if len(secrets.Items)+len(cms.Items)+len(svcs.Items) > 0 || !apierrors.IsNotFound(err) {
				return fmt.Errorf("left behind: %d release secrets, %d configmaps, %d services, deployment err=%v",
					len(secrets.Items), len(cms.Items), len(svcs.Items), err)
			}
			return nil
		})
	})
}

// An upgrade the API server rejects is rolled back to the last good
// revision, retried a bounded number of times, then Stalled: no loop.
func TestFailedUpgradeIsRolledBackWithoutLooping(t *testing.T) {
	parallel(t, 20*time.Second)
	env, ns, _ := appFixture(t, testWatches())
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "svc", map[string]any{"replicas": 1})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "svc", 1)

	// 70000 is not a valid port: the API server rejects the Service.
	patchSpec(t, env, ns, "svc", map[string]any{"port": 70000})
	var st api.Status
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		_, s, err := getApp(ctx, env, ns, "svc")
		if err != nil {
			return err
		}
		st = s
		if condition(s, api.ConditionStalled).Status != metav1.ConditionTrue {
			return fmt.Errorf("not stalled yet: %+v", s.Conditions)
		}
		return nil
	})
	if c := condition(st, api.ConditionRemediated); c.Status != metav1.ConditionTrue || c.Reason != string(api.ReasonRollbackSucceeded) {
		t.Errorf("Remediated = %+v", c)
	}
	if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonRetriesExhausted) {
		t.Errorf("Ready = %+v", c)
	}
	history := helmCmd(t, env, "history", "svc", "-n", ns, "--max", "100")
	// The first attempt and 2 retries; one more if a rollback itself failed
	// (a remediation failure counts too, and is bounded the same way).
	if st.Failures < 3 || st.Failures > 4 {
		t.Errorf("failures = %d, want 3 (or 4 after a failed rollback)\n%s", st.Failures, history)
	}
	time.Sleep(5 * time.Second)
	if again := helmCmd(t, env, "history", "svc", "-n", ns, "--max", "100"); again != history {
		t.Errorf("history keeps growing after Stalled:\n%s\nthen\n%s", history, again)
	}
	if lines := strings.Count(strings.TrimSpace(history), "\n"); lines > 5 {
		t.Errorf("history holds %d revisions, want at most maxHistory 5:\n%s", lines, history)
	}
	if !strings.Contains(history, "Rollback to ") {
		t.Errorf("no rollback in history:\n%s", history)
	}
	lines := strings.Split(strings.TrimSpace(history), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "deployed") {
		t.Errorf("the latest revision is not the rolled-back, deployed one: %s", last)
	}
	svc := &corev1.Service{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "svc"}, svc); err != nil || svc.Spec.Ports[0].Port != 80 {
		t.Errorf("service not at the last good port: %+v (err %v)", svc.Spec.Ports, err)
	}

	// Fixing the spec starts over.
	patchSpec(t, env, ns, "svc", map[string]any{"port": 8080})
	st = waitReady(t, env, ns, "svc", 0)
	if st.Failures != 0 || condition(st, api.ConditionStalled).Status == metav1.ConditionTrue {
		t.Errorf("after the fix: %+v", st)
	}
}

// Values the chart rejects stall the resource with the chart's own message,
// before anything is installed: a part of its schema the CRD cannot
// express ("not"), a value its templates require. What the CRD expresses
// the API server refuses outright, naming the field.
func TestValuesTheChartRejectsStall(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := appFixture(t, testWatches())
	ctx := context.Background()
	err := env.Client.Create(ctx, newApp(ns, "typed", map[string]any{"replicas": "many"}))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.replicas") {
		t.Errorf("the API server took replicas: many (the CRD's schema says integer): %v", err)
	}
	cases := []struct {
		name, want string
		spec       map[string]any
	}{
		{"schema", "data", map[string]any{"data": "forbidden"}},
		{"template", "requireMe needs .Values.mandatory to be set", map[string]any{"requireMe": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := env.Client.Create(ctx, newApp(ns, tc.name, tc.spec)); err != nil {
				t.Fatal(err)
			}
			testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
				_, st, err := getApp(ctx, env, ns, tc.name)
				if err != nil {
					return err
				}
				stalled, ready := condition(st, api.ConditionStalled), condition(st, api.ConditionReady)
				if stalled.Status != metav1.ConditionTrue || ready.Status != metav1.ConditionFalse || !strings.Contains(ready.Message, tc.want) {
					return fmt.Errorf("conditions %+v", st.Conditions)
				}
				return nil
			})
			var secrets corev1.SecretList
			if err := env.Client.List(ctx, &secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": tc.name}); err != nil || len(secrets.Items) != 0 {
				t.Errorf("a release was stored for rejected values: %d (err %v)", len(secrets.Items), err)
			}
		})
	}
}
