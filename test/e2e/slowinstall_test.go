package e2e

import (
	"context"
	"fmt"
	"path/filepath"
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

// A first install that is not Ready within the readiness timeout (15s
// here; its Pods ask for a node that does not exist) says so, Ready
// False ReadinessTimeout, and keeps waiting: over a window of several
// timeouts its revision 1 is the same Secret (never uninstalled and
// installed again), and no uninstall is recorded.
func TestSlowFirstInstallIsNotTornDown(t *testing.T) {
	t.Parallel()
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-slowinstall.yaml")
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
	// Four more timeouts: the same revision 1, no uninstall, still waiting.
	until := time.Now().Add(time.Minute)
	for i := 0; time.Now().Before(until) && i < 30; i++ {
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
		time.Sleep(5 * time.Second)
	}
	_, st, err := getApp(ctx, env, ns, "slow")
	if err != nil {
		t.Fatal(err)
	}
	if c := condition(st, api.ConditionReady); c.Reason != string(api.ReasonReadinessTimeout) {
		t.Errorf("Ready %+v, want reason %s", c, api.ReasonReadinessTimeout)
	}
}
