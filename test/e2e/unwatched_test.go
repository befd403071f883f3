package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A kind removed from watches.yaml leaves its resources holding the
// finalizer with nothing to remove it. The operator says so at start (a
// log line naming the kind and its releases, and the
// chartkeeper_unwatched_releases metric), and the documented kubectl
// command (docs/release-engine.md) lets a deleted resource go.
func TestKindRemovedFromWatchesIsReportedAtStart(t *testing.T) {
	parallel(t, quick)
	env := testenv.Cluster(t)
	installCRDs(t, env, testWatches())
	installCRDs(t, env, timeoutWatches())
	ns := env.Namespace(t)
	ctx := context.Background()

	first := startConfined(t, env, ns, testWatches(),
		"--metrics-bind-address", "0")
	if err := env.Client.Create(ctx, newApp(ns, "orphan", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "orphan", 1)
	if err := first.interrupt(t, time.Minute); err != nil {
		t.Fatalf("stopping the first operator: %v", err)
	}

	// The same operator, with App gone from its watches.
	m := freeAddr(t)
	second := startConfined(t, env, ns, timeoutWatches(),
		"--metrics-bind-address", m)
	wantLog := "kind App.test.chartkeeper.dev is not in watches.yaml, but 1 of its releases remain"
	wantMetric := `chartkeeper_unwatched_releases{kind="App.test.chartkeeper.dev"}`
	second.eventually(t, time.Minute, func(ctx context.Context) error {
		out := second.out.String()
		if !strings.Contains(out, wantLog) || !strings.Contains(out, ns+"/orphan") {
			return fmt.Errorf("no log line %q naming %s/orphan", wantLog, ns)
		}
		n, err := counter("http://"+m+"/metrics", wantMetric)
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%s is %d, want 1", wantMetric, n)
		}
		return nil
	})

	// Deleted, the resource is held by the finalizer no one removes...
	app := newApp(ns, "orphan", nil)
	if err := env.Client.Delete(ctx, app); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	u, _, err := getApp(ctx, env, ns, "orphan")
	if err != nil {
		t.Fatalf("the deleted App should still be held by its finalizer: %v", err)
	}
	if u.GetDeletionTimestamp() == nil || len(u.GetFinalizers()) == 0 || u.GetFinalizers()[0] != api.Finalizer {
		t.Fatalf("want the App deleting and held by %s, got finalizers %v", api.Finalizer, u.GetFinalizers())
	}
	// ...until the command of docs/release-engine.md removes it.
	patch := `[{"op":"test","path":"/metadata/finalizers/0","value":"` + api.Finalizer + `"},{"op":"remove","path":"/metadata/finalizers/0"}]`
	cmd := exec.Command(filepath.Join(testenv.BinDir(), "kubectl"), "--kubeconfig", env.Kubeconfig,
		"patch", "apps.test.chartkeeper.dev", "orphan", "-n", ns, "--type=json", "-p", patch)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl patch: %v\n%s", err, out)
	}
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		if _, _, err := getApp(ctx, env, ns, "orphan"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the App is still there (%v)", err)
		}
		return nil
	})
}
