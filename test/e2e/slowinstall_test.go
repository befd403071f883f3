package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A first install that is not Ready within the readiness timeout (3s
// here; its Pods ask for a node that does not exist) says so, Ready
// False ReadinessTimeout, and keeps waiting: over a window of several
// timeouts, and when the operator is asked to look at it again after
// them, its revision 1 is the same Secret (never uninstalled and installed
// again), and no uninstall is recorded.
func TestSlowFirstInstallIsNotTornDown(t *testing.T) {
	parallel(t, 20*time.Second)
	const timeout = 3 * time.Second
	watchesFile := appWatches(t, fmt.Sprintf("  remediation:\n    retries: 2\n    backoff: {initial: 1s, max: 2s}\n  readiness:\n    timeout: %s\n", timeout))
	env, ns, _ := appFixture(t, watchesFile)
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "slow", map[string]any{"nodeSelector": map[string]any{"chartkeeper.dev/no-such-node": "true"}})); err != nil {
		t.Fatal(err)
	}
	secretKey := types.NamespacedName{Namespace: ns, Name: "sh.helm.release.v1.slow.v1"}
	var first types.UID
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		sec := &corev1.Secret{}
		if err := env.Client.Get(ctx, secretKey, sec); err != nil {
			return err
		}
		first = sec.UID
		return nil
	})
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getApp(ctx, env, ns, "slow")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonReadinessTimeout) {
			return fmt.Errorf("Ready is not False %s: %+v", api.ReasonReadinessTimeout, st.Conditions)
		}
		return nil
	})
	// Four more timeouts (and the backoff a remediation would wait), then
	// a reconcile requested: the same revision 1, no uninstall, still
	// waiting.
	check := func() {
		t.Helper()
		sec := &corev1.Secret{}
		if err := env.Client.Get(ctx, secretKey, sec); err != nil {
			t.Fatalf("revision 1 of the release: %v", err)
		}
		if sec.UID != first {
			t.Fatalf("revision 1 was uninstalled and installed again (Secret UID %s, was %s)", sec.UID, first)
		}
		_, st, err := getApp(ctx, env, ns, "slow")
		if err != nil {
			t.Fatal(err)
		}
		if c := condition(st, api.ConditionStalled); c.Status == metav1.ConditionTrue {
			t.Fatalf("a slow first install stalled: %+v", c)
		}
		if st.Release == nil || st.Release.Revision != 1 {
			t.Fatalf("status.release %+v, want revision 1", st.Release)
		}
		var evs eventsv1.EventList
		if err := env.Client.List(ctx, &evs, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs.Items {
			if ev.Regarding.Name == "slow" && (ev.Reason == string(api.ReasonUninstallSucceeded) || ev.Reason == string(api.ReasonUninstallFailed)) {
				t.Fatalf("the slow install was uninstalled: %s %s", ev.Reason, ev.Note)
			}
		}
	}
	for until := time.Now().Add(4 * timeout); time.Now().Before(until); time.Sleep(time.Second) {
		check()
	}
	requestReconcile(t, env, ns, "slow", time.Now().UTC().Format(time.RFC3339Nano))
	check()
	_, st, err := getApp(ctx, env, ns, "slow")
	if err != nil {
		t.Fatal(err)
	}
	if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonReadinessTimeout) {
		t.Errorf("Ready %+v, want False %s", c, api.ReasonReadinessTimeout)
	}
}
