package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A person's `helm upgrade --set` on a managed release inherits
// chartkeeper's digest label (Helm copies the last revision's labels), yet
// it runs other values. chartkeeper sees it within a reconcile period,
// upgrades the release back to the desired values and says in an Event
// who changed it (the description Helm recorded).
func TestHandUpgradeIsRevertedAndNamed(t *testing.T) {
	parallel(t, 25*time.Second)
	periodic := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-periodic.yaml")
	env, ns, op := appFixture(t, periodic)
	ctx := context.Background()
	const name = "oob"
	if err := env.Client.Create(ctx, newApp(ns, name, map[string]any{"data": "desired"})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, name, 1)

	chartDir := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "charts", "app")
	helmCmd(t, env, "upgrade", name, chartDir, "-n", ns, "--reuse-values", "--set", "data=hand")
	if got := configData(ctx, t, env, ns, name+"-config"); got != "hand" {
		t.Fatalf("the hand upgrade did not run: ConfigMap data %q", got)
	}

	// Bounded: the watch reconciles every second; a minute is many periods.
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		u, st, err := getApp(ctx, env, ns, name)
		if err != nil {
			return err
		}
		if st.Release == nil || st.Release.Revision != 3 || st.Release.LastAction != "Upgrade" {
			return fmt.Errorf("not upgraded back as revision 3: %+v", st.Release)
		}
		if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionTrue || st.ObservedGeneration != u.GetGeneration() {
			return fmt.Errorf("not Ready: %+v", st.Conditions)
		}
		if got := configData(ctx, t, env, ns, name+"-config"); got != "desired" {
			return fmt.Errorf("ConfigMap data %q, want the desired value", got)
		}
		return nil
	})
	if vals := helmCmd(t, env, "get", "values", name, "-n", ns); !strings.Contains(vals, "data: desired") || strings.Contains(vals, "hand") {
		t.Errorf("revision 3 values:\n%s", vals)
	}
	// The Event names the hand change as Helm recorded it.
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		msgs := eventMessages(ctx, t, env, ns, name)
		for _, m := range msgs {
			if strings.Contains(m, "revision 2") && strings.Contains(m, "outside chartkeeper") && strings.Contains(m, "Upgrade complete") {
				return nil
			}
		}
		return fmt.Errorf("no Event names the hand upgrade: %q", msgs)
	})
	// A restarted operator decodes revision 3 from storage (JSON, as Helm
	// keeps it) and trusts it: several periodic reconciles make no upgrade.
	if err := op.interrupt(t, 30*time.Second); err != nil {
		t.Logf("first operator: %v", err)
	}
	metrics := freeAddr(t)
	startConfined(t, env, ns, periodic, "--metrics-bind-address", metrics)
	t.Cleanup(func() { deleteApps(t, env, ns) }) // while the second operator runs
	url := "http://" + metrics + "/metrics"
	testenv.Eventually(t, time.Minute, func(context.Context) error {
		if n := scrape(t, url, "controller_runtime_reconcile_total")["controller_runtime_reconcile_total"]; n < 3 {
			return fmt.Errorf("%.0f reconciles so far", n)
		}
		return nil
	})
	if _, st, err := getApp(ctx, env, ns, name); err != nil || st.Release == nil || st.Release.Revision != 3 ||
		condition(st, api.ConditionReady).Status != metav1.ConditionTrue {
		t.Errorf("after a restart: %+v %+v (%v)", st.Release, st.Conditions, err)
	}
	if n := len(releaseSecrets(t, env, ns, name)); n != 3 {
		t.Errorf("%d revisions stored, want 3: chartkeeper's own revision was not trusted", n)
	}
}

// configData reads the data key of a ConfigMap ("" when absent).
func configData(ctx context.Context, t *testing.T, env *testenv.Env, ns, name string) string {
	t.Helper()
	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &cm); err != nil {
		return ""
	}
	return cm.Data["data"]
}
