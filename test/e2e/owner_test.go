package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// Two kinds whose release names are made the same way ({{ .Name }}): an
// App db and a HookApp db in one namespace would share release db. The
// first one owns it; the second is refused with a condition naming the
// owner, never upgrades the release to its own chart, and deleting it
// leaves the owner's release and objects alone.
func TestTwoKindsNeverShareARelease(t *testing.T) {
	parallel(t, 15*time.Second)
	env, ns, op := kindFixture(t, filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-twokinds.yaml"), hookAppGVK, appGVK)
	ctx := context.Background()
	// The watches file was found to allow it: a warning at start.
	if out := op.out.String(); !strings.Contains(out, "release names can collide") || !strings.Contains(out, "App (entry 0) and HookApp (entry 1)") {
		t.Errorf("no warning that App and HookApp releases can collide:\n%s", out)
	}

	if err := env.Client.Create(ctx, newApp(ns, "db", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "db", 1)
	if err := env.Client.Create(ctx, newCR(hookAppGVK, ns, "db", map[string]any{"hook": false})); err != nil {
		t.Fatal(err)
	}
	owner := "App " + ns + "/db"
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, env, hookAppGVK, ns, "db")
		if err != nil {
			return err
		}
		ready := condition(st, api.ConditionReady)
		if ready.Status != "False" || ready.Reason != string(api.ReasonReleaseOwnedByAnother) || !strings.Contains(ready.Message, owner) {
			return fmt.Errorf("want Ready False %s naming %s, got %+v", api.ReasonReleaseOwnedByAnother, owner, ready)
		}
		return nil
	})
	// The release is still the App's, at revision 1.
	if out := helmCmd(t, env, "history", "db", "-n", ns, "-o", "json"); strings.Count(out, `"revision"`) != 1 || !strings.Contains(out, `"chart":"app-`) {
		t.Fatalf("release db changed hands: %s", out)
	}

	if err := env.Client.Delete(ctx, newCR(hookAppGVK, ns, "db", nil)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env, hookAppGVK, ns, "db", time.Minute)
	// The App's release and objects are untouched.
	waitReady(t, env, ns, "db", 1)
	if out := helmCmd(t, env, "status", "db", "-n", ns); !strings.Contains(out, "STATUS: deployed") {
		t.Fatalf("App db's release after deleting HookApp db: %s", out)
	}
}

// A release a person installed with helm (no chartkeeper labels) under the
// name a custom resource would use is not taken over (the watch does not
// say adopt: true): the resource is refused with a condition saying so,
// the release keeps its one revision, and deleting the resource leaves it.
func TestHandInstalledReleaseIsNotTakenOver(t *testing.T) {
	parallel(t, quick)
	env := testenv.Cluster(t)
	wf := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-twokinds.yaml")
	installCRDs(t, env, wf)
	ns := env.Namespace(t)
	chart := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "charts", "app")
	helmCmd(t, env, "install", "web", chart, "-n", ns)
	startConfined(t, env, ns, wf, "--metrics-bind-address", "0")
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{appGVK}) })
	ctx := context.Background()

	if err := env.Client.Create(ctx, newApp(ns, "web", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getApp(ctx, env, ns, "web")
		if err != nil {
			return err
		}
		ready, stalled := condition(st, api.ConditionReady), condition(st, api.ConditionStalled)
		if ready.Status != "False" || ready.Reason != string(api.ReasonReleaseOwnedByAnother) ||
			!strings.Contains(ready.Message, "not made by chartkeeper") || stalled.Status != "True" {
			return fmt.Errorf("want Ready False %s saying the release was not made by chartkeeper, Stalled True; got %+v", api.ReasonReleaseOwnedByAnother, st.Conditions)
		}
		return nil
	})
	if out := helmCmd(t, env, "history", "web", "-n", ns, "-o", "json"); strings.Count(out, `"revision"`) != 1 {
		t.Fatalf("the hand-installed release was changed: %s", out)
	}

	if err := env.Client.Delete(ctx, newApp(ns, "web", nil)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env, appGVK, ns, "web", time.Minute)
	if out := helmCmd(t, env, "status", "web", "-n", ns); !strings.Contains(out, "STATUS: deployed") {
		t.Fatalf("the hand-installed release after deleting App web: %s", out)
	}
	helmCmd(t, env, "uninstall", "web", "-n", ns)
}

// With adopt: true on the watch, a release a person installed under the
// name a resource uses is taken over: upgraded to the resource's values,
// then the resource's (deleting it uninstalls the release).
func TestHandInstalledReleaseIsAdoptedWhenTheWatchSaysSo(t *testing.T) {
	parallel(t, 15*time.Second)
	env := testenv.Cluster(t)
	wf := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-adopt.yaml")
	installCRDs(t, env, wf)
	ns := env.Namespace(t)
	chart := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "charts", "app")
	helmCmd(t, env, "install", "web", chart, "-n", ns, "--set", "data=by-hand")
	startConfined(t, env, ns, wf, "--metrics-bind-address", "0")
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{appGVK}) })
	ctx := context.Background()

	if err := env.Client.Create(ctx, newApp(ns, "web", map[string]any{"data": "adopted"})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "web", 2)
	if out := helmCmd(t, env, "get", "values", "web", "-n", ns, "-o", "json"); !strings.Contains(out, `"adopted"`) {
		t.Fatalf("the adopted release runs other values: %s", out)
	}
	if err := env.Client.Delete(ctx, newApp(ns, "web", nil)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env, appGVK, ns, "web", time.Minute)
	if out := helmCmd(t, env, "list", "-n", ns, "-q"); strings.Contains(out, "web") {
		t.Fatalf("the adopted release outlived its resource: %s", out)
	}
}
