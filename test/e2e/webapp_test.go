package e2e

import (
	"context"
	"fmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var webAppGVK = schema.GroupVersionKind{Group: "apps.chartkeeper.dev", Version: "v1alpha1", Kind: "WebApp"}

// The bundled WebApp: the samples become Ready with their Pods Running, a
// spec change scales the Deployment, and a spec the chart's schema rejects
// stalls without touching what runs.
func TestWebAppSamples(t *testing.T) {
	parallel(t, 25*time.Second)
	env, ns := bundledFixture(t)
	kubectl := filepath.Join(testenv.BinDir(), "kubectl")
	t.Cleanup(func() {
		_ = exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "-n", ns, "delete", "--wait", "--timeout=60s", "webapps,etcdclusters", "--all").Run()
	})
	if out, err := exec.Command(kubectl, "--kubeconfig", env.Kubeconfig, "-n", ns, "apply", "-k",
		filepath.Join(testenv.RepoRoot(), "config", "samples")).CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply -k config/samples: %v\n%s", err, out)
	}
	ctx := context.Background()
	webStatus := func(ctx context.Context, name string) (*unstructured.Unstructured, api.Status, error) {
		return getCR(ctx, env, webAppGVK, ns, name)
	}
	waitWebReady := func(name string, replicas int32) {
		t.Helper()
		testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
			u, st, err := webStatus(ctx, name)
			if err != nil {
				return err
			}
			if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionTrue || st.ObservedGeneration != u.GetGeneration() {
				return fmt.Errorf("%s not ready: %+v", name, st.Conditions)
			}
			var pods corev1.PodList
			if err := env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": name}); err != nil {
				return err
			}
			running := int32(0)
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
					running++
				}
			}
			if running != replicas {
				return fmt.Errorf("%s: %d Pods Running, want %d", name, running, replicas)
			}
			return nil
		})
	}
	waitWebReady("webapp-sample", 2)
	waitWebReady("webapp-public", 2)
	for _, obj := range []client.Object{&policyv1.PodDisruptionBudget{}, &appsv1.Deployment{}, &corev1.Service{}} {
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "webapp-sample"}, obj); err != nil {
			t.Errorf("webapp-sample %T: %v", obj, err)
		}
	}
	for _, obj := range []client.Object{&networkingv1.Ingress{}, &autoscalingv2.HorizontalPodAutoscaler{}} {
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "webapp-public"}, obj); err != nil {
			t.Errorf("webapp-public %T: %v", obj, err)
		}
	}

	// Scale through the spec.
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3}}`))
	app := &unstructured.Unstructured{}
	app.SetGroupVersionKind(webAppGVK)
	app.SetNamespace(ns)
	app.SetName("webapp-sample")
	if err := env.Client.Patch(ctx, app, patch); err != nil {
		t.Fatal(err)
	}
	waitWebReady("webapp-sample", 3)

	// A spec the chart's schema rejects: the API server refuses it (the
	// CRD's schema comes from the chart's), the running Deployment untouched.
	before := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "webapp-sample"}, before); err != nil {
		t.Fatal(err)
	}
	err := env.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":-1}}`)))
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.replicas") {
		t.Fatalf("replicas: -1 was not refused with the field named: %v", err)
	}
	after := &appsv1.Deployment{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "webapp-sample"}, after); err != nil {
		t.Fatal(err)
	}
	if after.Generation != before.Generation || *after.Spec.Replicas != 3 {
		t.Errorf("the running Deployment was touched: generation %d -> %d, replicas %d", before.Generation, after.Generation, *after.Spec.Replicas)
	}
}
