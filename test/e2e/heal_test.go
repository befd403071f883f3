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

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// An App whose release namespace does not exist yet reports the missing
// namespace (Released False MissingDependency, not Stalled) and is retried
// with backoff; once the test creates the namespace it becomes Ready, with
// no change to its spec.
func TestMissingReleaseNamespaceHeals(t *testing.T) {
	parallel(t, 20*time.Second)
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-heal.yaml")
	env := testenv.Cluster(t)
	installCRDs(t, env, testWatches())
	ns := env.Namespace(t)
	target := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns + "-target", Labels: map[string]string{"chartkeeper.dev/test": "true"}}}
	ctx := context.Background()
	// Registered first, so it runs after the Apps are deleted.
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), target) })
	startOperatorEnv(t, []string{"WATCH_NAMESPACE=" + ns + "," + target.Name}, operatorKubeconfig(t, env, watchesFile), watchesFile,
		"--metrics-bind-address", "0")
	t.Cleanup(func() { deleteApps(t, env, ns) })

	if err := env.Client.Create(ctx, newApp(ns, "heal", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getApp(ctx, env, ns, "heal")
		if err != nil {
			return err
		}
		rel := condition(st, api.ConditionReleased)
		if rel.Reason != string(api.ReasonMissingDependency) || !strings.Contains(rel.Message, target.Name) {
			return fmt.Errorf("Released does not report the missing namespace %s: %+v", target.Name, st.Conditions)
		}
		if c := condition(st, api.ConditionStalled); c.Status == metav1.ConditionTrue {
			return fmt.Errorf("stalled on a missing namespace: %+v", c)
		}
		return nil
	})
	// Still retried, not stalled, a few backoffs later.
	time.Sleep(10 * time.Second)
	u, st, err := getApp(ctx, env, ns, "heal")
	if err != nil {
		t.Fatal(err)
	}
	if c := condition(st, api.ConditionStalled); c.Status == metav1.ConditionTrue {
		t.Fatalf("stalled on a missing namespace: %+v", c)
	}
	gen := u.GetGeneration()

	if err := env.Client.Create(ctx, target); err != nil {
		t.Fatal(err)
	}
	st = waitReady(t, env, ns, "heal", 1)
	if u, _, err := getApp(ctx, env, ns, "heal"); err != nil || u.GetGeneration() != gen {
		t.Fatalf("the spec changed (generation %d, was %d; %v)", u.GetGeneration(), gen, err)
	}
	if st.Release == nil || st.Release.Namespace != target.Name {
		t.Errorf("status.release %+v, want namespace %s", st.Release, target.Name)
	}
}
