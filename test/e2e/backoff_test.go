package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

func backoffWatches() string {
	return filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-backoff.yaml")
}

// A drift correction that can never succeed (an admission policy refuses
// to let the deleted ConfigMap be created again) is not retried in a
// storm: with the watch's backoff (5s doubling to 30s) it is tried fewer
// than 10 times in 2 minutes, and status.nextAttemptTime says when the
// next attempt is due.
func TestFailingDriftCorrectionBacksOff(t *testing.T) {
	t.Parallel()
	metricsAddr := freeAddr(t)
	env, ns, _ := appFixture(t, backoffWatches(), "--metrics-bind-address", metricsAddr)
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "stuck", map[string]any{"replicas": 1})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "stuck", 1)
	refuseConfigMaps(t, env, ns, "stuck-config")
	if err := env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stuck-config"}}); err != nil {
		t.Fatal(err)
	}
	failures := func() (int, error) {
		return counter("http://"+metricsAddr+"/metrics", `chartkeeper_helm_actions_total{action="CorrectDrift",result="failure"}`)
	}
	testenv.Eventually(t, time.Minute, func(context.Context) error {
		if n, err := failures(); err != nil || n == 0 {
			return fmt.Errorf("no failed correction yet (%d, %v)", n, err)
		}
		return nil
	})
	// Two minutes of a correction that cannot succeed: a handful of
	// attempts, not one every 200 ms.
	for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(2 * time.Second) {
		n, err := failures()
		if err != nil {
			t.Fatal(err)
		}
		if n >= 10 {
			t.Fatalf("%d failed drift corrections in less than 2 minutes: retried without backoff", n)
		}
	}
	if n, _ := failures(); n < 2 {
		t.Errorf("only %d attempts in 2 minutes: the correction is no longer retried", n)
	}
	u, st, err := getApp(ctx, env, ns, "stuck")
	if err != nil {
		t.Fatal(err)
	}
	if next, _, _ := unstructured.NestedString(u.Object, "status", "nextAttemptTime"); next == "" {
		t.Errorf("status.nextAttemptTime not set: %v", u.Object["status"])
	}
	if c := condition(st, api.ConditionReleased); c.Reason != string(api.ReasonDriftCorrectionFailed) && c.Reason != string(api.ReasonBackoff) {
		t.Errorf("Released %+v, want the failed correction or its backoff", c)
	}
}

// A BeforeUninstall hook that keeps failing holds the deletion: the
// resource stays, with its finalizer and its release, Ready False
// HookFailed naming the hook and the annotation that lets a person
// proceed; once chartkeeper.dev/skip-uninstall-hooks is "true" the hooks
// are skipped and the release is uninstalled.
func TestFailingBeforeUninstallHookHoldsDeletionUntilSkipped(t *testing.T) {
	t.Parallel()
	env := testenv.Cluster(t)
	installCRDs(t, env, testWatches())
	ns := env.Namespace(t)
	startBinaryEnv(t, buildBinary(t, "./test/e2e/testdata/hookfail"), []string{"WATCH_NAMESPACE=" + ns},
		operatorKubeconfig(t, env, backoffWatches()), backoffWatches(), "--metrics-bind-address", "0")
	ctx := context.Background()
	t.Cleanup(func() { releaseFinalizer(t, env, ns, "held") }) // runs before the operator stops

	if err := env.Client.Create(ctx, newApp(ns, "held", map[string]any{"replicas": 1})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "held", 1)
	if err := env.Client.Delete(ctx, newApp(ns, "held", nil)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		u, st, err := getApp(ctx, env, ns, "held")
		if err != nil {
			return err
		}
		c := condition(st, api.ConditionReady)
		if c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonHookFailed) ||
			!strings.Contains(c.Message, "backup") || !strings.Contains(c.Message, "chartkeeper.dev/skip-uninstall-hooks") {
			return fmt.Errorf("Ready %+v", c)
		}
		if next, _, _ := unstructured.NestedString(u.Object, "status", "nextAttemptTime"); next == "" {
			return fmt.Errorf("status.nextAttemptTime not set")
		}
		return nil
	})
	// Held: the resource, its finalizer and its release stay.
	time.Sleep(10 * time.Second)
	u, _, err := getApp(ctx, env, ns, "held")
	if err != nil {
		t.Fatalf("the resource went although its BeforeUninstall hook failed: %v", err)
	}
	if len(u.GetFinalizers()) == 0 {
		t.Fatal("finalizer gone")
	}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "held-config"}, &corev1.ConfigMap{}); err != nil {
		t.Fatalf("released ConfigMap: %v", err)
	}

	patch := []byte(`{"metadata":{"annotations":{"chartkeeper.dev/skip-uninstall-hooks":"true"}}}`)
	if err := env.Client.Patch(ctx, newApp(ns, "held", nil), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env, appGVK, ns, "held", time.Minute)
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "held-config"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("released ConfigMap not uninstalled (err=%v)", err)
		}
		return nil
	})
}

// refuseConfigMaps makes the API server refuse to create ConfigMaps named
// name in ns (a ValidatingAdmissionPolicy and its binding, removed at the
// end of the test), and waits until it does.
func refuseConfigMaps(t *testing.T, env *testenv.Env, ns, name string) {
	t.Helper()
	ctx := context.Background()
	fail := admissionv1.Deny
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "refuse-" + ns},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
				ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
				}}},
			},
			Validations: []admissionv1.Validation{{
				Expression: fmt.Sprintf("!object.metadata.name.startsWith(%q)", name),
				Message:    "refused by the test's admission policy",
			}},
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "refuse-" + ns},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: policy.Name, ValidationActions: []admissionv1.ValidationAction{fail},
		},
	}
	for _, o := range []client.Object{policy, binding} {
		if err := env.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), binding)
		_ = env.Client.Delete(context.Background(), policy)
	})
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-probe"}}
		if err := env.Client.Create(ctx, probe, client.DryRunAll); err == nil {
			return fmt.Errorf("policy not in effect yet")
		}
		return nil
	})
}

// counter reads one sample of a Prometheus counter (0 when absent).
func counter(url, sample string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int(f), err
		}
	}
	return 0, sc.Err()
}

// releaseFinalizer lets a resource a failed test left held go: the
// annotation first, then, if it is still there, its finalizers removed.
func releaseFinalizer(t *testing.T, env *testenv.Env, ns, name string) {
	ctx := context.Background()
	app := newApp(ns, name, nil)
	patch := []byte(`{"metadata":{"annotations":{"chartkeeper.dev/skip-uninstall-hooks":"true"}}}`)
	if err := env.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return // gone
	}
	for i := 0; i < 15; i++ {
		if _, _, err := getApp(ctx, env, ns, name); apierrors.IsNotFound(err) {
			return
		}
		time.Sleep(time.Second)
	}
	_ = env.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
	t.Logf("removed the finalizers of %s/%s by hand", ns, name)
}
