package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
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

// The backoff of the failures in this file: 1s doubling to 8s.
const (
	backoffInitial = time.Second
	backoffMax     = 8 * time.Second
)

// backoffWatches is the App kind with a short backoff: a failure that
// does not go away (a drift correction refused by an admission policy, a
// BeforeUninstall hook that keeps failing) is retried after 1s, 2s, 4s,
// 8s, 8s, ...
func backoffWatches(t *testing.T) string {
	return appWatches(t, fmt.Sprintf("  remediation:\n    retries: 2\n    backoff: {initial: %s, max: %s}\n", backoffInitial, backoffMax))
}

// backoffAfter is the shortest wait the watch's backoff allows after n
// failures in a row (jitter only lengthens it).
func backoffAfter(n int) time.Duration {
	return min(backoffInitial<<(n-1), backoffMax)
}

// A drift correction that can never succeed (an admission policy refuses
// to let the deleted ConfigMap be created again) is not retried in a
// storm but backs off: it is tried again and again, each attempt at least
// the watch's backoff after the failure before it (1s, then 2s, then
// 4s: doubling), and status.nextAttemptTime says when the next one is due.
func TestFailingDriftCorrectionBacksOff(t *testing.T) {
	parallel(t, 25*time.Second)
	metricsAddr := freeAddr(t)
	env, ns, _ := appFixture(t, backoffWatches(t), "--metrics-bind-address", metricsAddr)
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "stuck", map[string]any{"replicas": 1})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "stuck", 1)
	refuseConfigMaps(t, env, ns, "stuck-config")
	if err := env.Client.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "stuck-config"}}); err != nil {
		t.Fatal(err)
	}
	// Four failed corrections in a row: three waits of the backoff.
	const attempts = 4
	var u *unstructured.Unstructured
	var st api.Status
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		var err error
		if u, st, err = getApp(ctx, env, ns, "stuck"); err != nil {
			return err
		}
		if st.BackoffOf != "CorrectDrift" || st.BackoffFailures < attempts {
			return fmt.Errorf("backoffOf %q after %d failures, want CorrectDrift after %d", st.BackoffOf, st.BackoffFailures, attempts)
		}
		return nil
	})
	// status.history holds the failed corrections, newest first: the
	// newest is failure number st.BackoffFailures. Each one started at
	// least the backoff of the failures before it after the one before
	// failed. (The status keeps whole seconds; truncating both ends of a
	// wait of at least a whole number of seconds never makes it shorter
	// than that number, so the check is exact, whatever the load.)
	var failed []api.Attempt
	for _, at := range st.History {
		if at.Action != "CorrectDrift" {
			break
		}
		if at.Result != api.AttemptFailed || at.Reason != api.ReasonDriftCorrectionFailed {
			t.Fatalf("attempt %+v, want a failed correction", at)
		}
		failed = append(failed, at)
	}
	if len(failed) < attempts {
		t.Fatalf("status.history holds %d failed corrections after %d failures: %+v", len(failed), st.BackoffFailures, st.History)
	}
	for i := 0; i+1 < len(failed); i++ {
		n := st.BackoffFailures - i - 1 // failures before failed[i]
		gap := failed[i].StartedAt.Sub(failed[i+1].FinishedAt.Time)
		t.Logf("correction %d started %s after correction %d failed", n+1, gap, n)
		if want := backoffAfter(n); gap < want {
			t.Errorf("correction %d started %s after the failure of correction %d, want at least %s (the backoff): retried without backoff", n+1, gap, n, want)
		}
	}
	next, _, _ := unstructured.NestedString(u.Object, "status", "nextAttemptTime")
	nextAt, err := time.Parse(time.RFC3339, next)
	if err != nil {
		t.Fatalf("status.nextAttemptTime %q: %v", next, err)
	}
	if wait, want := nextAt.Sub(failed[0].FinishedAt.Time), backoffAfter(st.BackoffFailures); wait < want {
		t.Errorf("status.nextAttemptTime %s is %s after the last failure, want at least %s (the backoff)", next, wait, want)
	}
	if c := condition(st, api.ConditionReleased); c.Reason != string(api.ReasonDriftCorrectionFailed) && c.Reason != string(api.ReasonBackoff) {
		t.Errorf("Released %+v, want the failed correction or its backoff", c)
	}
	// The failures are counted where a person monitoring looks.
	n, err := counter("http://"+metricsAddr+"/metrics", `chartkeeper_helm_actions_total{action="CorrectDrift",result="failure"}`)
	if err != nil || n < st.BackoffFailures {
		t.Errorf("chartkeeper_helm_actions_total of failed corrections %d (%v), want at least %d", n, err, st.BackoffFailures)
	}
}

// A BeforeUninstall hook that keeps failing holds the deletion: the
// resource stays, with its finalizer and its release, Ready False
// HookFailed naming the hook and the annotation that lets a person
// proceed; once chartkeeper.dev/skip-uninstall-hooks is "true" the hooks
// are skipped and the release is uninstalled.
func TestFailingBeforeUninstallHookHoldsDeletionUntilSkipped(t *testing.T) {
	parallel(t, quick)
	env := testenv.Cluster(t)
	installCRDs(t, env, testWatches())
	ns := env.Namespace(t)
	watchesFile := backoffWatches(t)
	startBinaryEnv(t, buildBinary(t, "./test/e2e/testdata/hookfail"), []string{"WATCH_NAMESPACE=" + ns},
		operatorKubeconfig(t, env, watchesFile), watchesFile, "--metrics-bind-address", "0")
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
	// Held: while the hook is tried again (after its backoff) and fails
	// again, the resource, its finalizer and its release stay.
	const attempts = 3
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		u, st, err := getApp(ctx, env, ns, "held")
		if apierrors.IsNotFound(err) {
			t.Fatalf("the resource went although its BeforeUninstall hook failed")
		}
		if err != nil {
			return err
		}
		if len(u.GetFinalizers()) == 0 {
			t.Fatal("finalizer gone")
		}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "held-config"}, &corev1.ConfigMap{}); apierrors.IsNotFound(err) {
			t.Fatal("the released ConfigMap went although the BeforeUninstall hook failed")
		} else if err != nil {
			return err
		}
		if st.BackoffOf != "BeforeUninstall" || st.BackoffFailures < attempts {
			return fmt.Errorf("backoffOf %q after %d failures, want BeforeUninstall after %d", st.BackoffOf, st.BackoffFailures, attempts)
		}
		return nil
	})

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
