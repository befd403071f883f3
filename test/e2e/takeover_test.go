package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/release"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A drop-in successor of helm-operator-plugins (issue 55): the pinned peer
// installs three Apps and upgrades each once; it stops, and chartkeeper
// starts on the same watches.yaml. Each release (its Secrets owned by its
// App, no chartkeeper label) is taken over: Ready at the peer's revision
// with no new revision, every released object's UID unchanged, an Event
// and a status.history entry saying so. A spec change then makes the next
// revision; deleting an App uninstalls its release and the App is gone
// within a minute, the peer's finalizer removed with chartkeeper's. An App
// deleted while no operator ran (only the peer's finalizer) is uninstalled
// and let go the same way.
func TestTakeOverFromHelmOperatorPlugins(t *testing.T) {
	parallel(t, 90*time.Second)
	env := testenv.Cluster(t)
	installCRDs(t, env, testWatches())
	ns := env.Namespace(t)
	wf := appWatches(t, "")
	ctx := context.Background()
	names := []string{"one", "two", "three"}

	peer := startHelmOperator(t, env, ns, wf)
	for _, n := range names {
		if err := env.Client.Create(ctx, newApp(ns, n, map[string]any{"data": "v1"})); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range names {
		waitRevisions(t, env, ns, n, 1)
		patchSpec(t, env, ns, n, map[string]any{"data": "v2"})
	}
	for _, n := range names {
		waitRevisions(t, env, ns, n, 2)
	}
	// A fourth App, deleted while no operator runs: it waits on the
	// peer's finalizer until chartkeeper uninstalls its release.
	if err := env.Client.Create(ctx, newApp(ns, "four", map[string]any{"data": "v1"})); err != nil {
		t.Fatal(err)
	}
	waitRevisions(t, env, ns, "four", 1)
	if err := peer.interrupt(t, 30*time.Second); err != nil {
		t.Logf("the peer stopped with %v", err)
	}
	if err := env.Client.Delete(ctx, newApp(ns, "four", nil)); err != nil {
		t.Fatal(err)
	}
	uids := map[string]map[string]string{}
	for _, n := range names {
		uids[n] = objectUIDs(t, env, ns, n)
		u, _, err := getApp(ctx, env, ns, n)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(u.GetFinalizers(), api.FinalizerHelmOperatorPlugins) {
			t.Fatalf("the peer left App %s without its finalizer %q: %v", n, api.FinalizerHelmOperatorPlugins, u.GetFinalizers())
		}
	}

	startConfined(t, env, ns, wf, "--metrics-bind-address", "0")
	t.Cleanup(func() { deleteApps(t, env, ns) })
	waitGone(t, env, appGVK, ns, "four", time.Minute)
	waitUninstalled(t, env, ns, "four")
	for _, n := range names {
		testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
			_, st, err := getApp(ctx, env, ns, n)
			if err != nil {
				return err
			}
			for _, at := range st.History {
				if at.Action == string(release.ActionTakeOver) && strings.Contains(at.Message, "upgrade follows") {
					u, _, _ := getApp(ctx, env, ns, n)
					t.Fatalf("App %s: the takeover found other chart or values: %s\nspec: %v\nstored values: %s", n, at.Message,
						u.Object["spec"], helmCmd(t, env, "get", "values", n, "-n", ns, "--revision", "2", "-o", "json"))
				}
			}
			if !tookOver(st) {
				return fmt.Errorf("App %s not taken over yet: %+v", n, st.Conditions)
			}
			return nil
		})
		st := waitReady(t, env, ns, n, 2)
		secrets, err := revisionSecrets(ctx, env, ns, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(secrets) != 2 {
			t.Errorf("App %s: %d revisions after the takeover, want the peer's 2", n, len(secrets))
		}
		if got := objectUIDs(t, env, ns, n); !maps.Equal(got, uids[n]) {
			t.Errorf("App %s: released objects recreated by the takeover: UIDs %v, were %v", n, got, uids[n])
		}
		if !tookOver(st) {
			t.Errorf("App %s: no %s attempt in status.history: %+v", n, release.ActionTakeOver, st.History)
		}
		if !hasEvent(t, env, ns, n, string(api.ReasonTakenOver)) {
			t.Errorf("App %s: no Event %s", n, api.ReasonTakenOver)
		}
	}

	// The next spec change is an ordinary upgrade: revision 3.
	patchSpec(t, env, ns, "one", map[string]any{"data": "v3"})
	waitReady(t, env, ns, "one", 3)
	if out := helmCmd(t, env, "get", "values", "one", "-n", ns, "-o", "json"); !strings.Contains(out, `"v3"`) {
		t.Fatalf("revision 3 of release one runs other values: %s", out)
	}

	// Deleting an App uninstalls its release; it goes within a minute, its
	// finalizers (the peer's and chartkeeper's) removed.
	if err := env.Client.Delete(ctx, newApp(ns, "two", nil)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env, appGVK, ns, "two", time.Minute)
	waitUninstalled(t, env, ns, "two")
}

// waitUninstalled waits until release name in ns has no revision left and
// its Service is gone.
func waitUninstalled(t *testing.T, env *testenv.Env, ns, name string) {
	t.Helper()
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		secrets, err := revisionSecrets(ctx, env, ns, name)
		if err != nil {
			return err
		}
		if len(secrets) > 0 {
			return fmt.Errorf("release %s still has %d revisions", name, len(secrets))
		}
		var d corev1.ServiceList
		if err := env.Client.List(ctx, &d, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, s := range d.Items {
			if s.Name == name {
				return fmt.Errorf("Service %s of the uninstalled release is still there", name)
			}
		}
		return nil
	})
}

// tookOver reports whether status.history holds a successful takeover.
func tookOver(st api.Status) bool {
	for _, at := range st.History {
		if at.Action == string(release.ActionTakeOver) && at.Result == api.AttemptSucceeded && at.Reason == api.ReasonTakenOver {
			return true
		}
	}
	return false
}

// hasEvent reports whether an Event about the object name in ns has reason.
func hasEvent(t *testing.T, env *testenv.Env, ns, name, reason string) bool {
	t.Helper()
	var evs corev1.EventList
	if err := env.Client.List(context.Background(), &evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		if e.InvolvedObject.Name == name && e.Reason == reason {
			return true
		}
	}
	return false
}
