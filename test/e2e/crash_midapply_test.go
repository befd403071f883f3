package e2e

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// An operator killed while it applies an upgrade leaves objects half
// upgraded, and the upgrade's pending revision on record naming them. The
// spec changes again before the next operator starts (a new Service port
// among it): the next operator unlocks the abandoned revision, rolls it
// back (its manifest is what is live, the base of the three-way merge)
// and upgrades to the new spec. make chaos lost releases when such an
// upgrade left no record: the live Service port was in no stored revision,
// and every later merge added the desired port next to it.
func killMidUpgradeLeavesItsRecord(t *testing.T) {
	// Serial but for its sibling (TestKillDuringUpgrade): it waits the
	// action timeout out, which an action on 150 ConfigMaps must not reach.
	watchesFile := crashWatches()
	env, ns, first := crashFixture(t, watchesFile)
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "big", map[string]any{"configMaps": 150})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "big", 1)
	patchSpec(t, env, ns, "big", map[string]any{"data": "v2", "configMaps": 150, "port": 8080})
	killWhen(t, first, "the upgrade half applied", func() bool {
		n := releasedConfigMapData(t, env, ns)
		return n["v1"] > 0 && n["v2"] > 0
	})
	if v, st := latestRevision(t, env, ns, "big"), latestReleaseStatus(t, env, ns, "big"); v != 2 || st != "pending-upgrade" {
		t.Fatalf("after the kill the latest stored revision is %d %s, want 2 pending-upgrade: objects were applied that no stored revision names", v, st)
	}
	patchSpec(t, env, ns, "big", map[string]any{"data": "v3", "configMaps": 150, "port": 9090})

	restartConfined(t, env, ns, watchesFile)
	t.Cleanup(func() { deleteApps(t, env, ns) })
	testenv.Eventually(t, 3*time.Minute, func(ctx context.Context) error {
		if st := latestReleaseStatus(t, env, ns, "big"); st != "deployed" {
			return fmt.Errorf("latest revision %s", st)
		}
		if n := releasedConfigMapData(t, env, ns); n["v3"] != 151 || len(n) != 1 {
			return fmt.Errorf("ConfigMaps by data: %v, want 151 at v3", n)
		}
		var svc corev1.Service
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "big"}, &svc); err != nil {
			return err
		}
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 9090 {
			return fmt.Errorf("Service ports %+v, want only 9090", svc.Spec.Ports)
		}
		return nil
	})
	st := waitReady(t, env, ns, "big", 0)
	if n := len(releaseSecrets(t, env, ns, "big")); n > 5 {
		t.Errorf("%d revisions stored, over maxHistory 5", n)
	}
	t.Logf("converged at revision %d: %s", st.Release.Revision, condition(st, api.ConditionReleased).Message)
}

// An operator killed while it applies an install leaves its pending
// revision on record; the resource deleted meanwhile goes, and so does
// every object.
func TestKillMidInstallLeavesItsRecord(t *testing.T) {
	// Nothing here waits for the action timeout (a deleted resource is
	// uninstalled, pending or not): it is long enough for an install or
	// uninstall of 150 ConfigMaps under the load of the parallel tests.
	parallel(t, 20*time.Second)
	watchesFile := crashWatchesWithTimeout(t, 5*time.Minute)
	env, ns, first := crashFixture(t, watchesFile)
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "half", map[string]any{"configMaps": 150})); err != nil {
		t.Fatal(err)
	}
	killWhen(t, first, "the install half applied", func() bool {
		return releasedConfigMapData(t, env, ns)["v1"] > 0
	})
	if st := latestReleaseStatus(t, env, ns, "half"); st != "pending-install" {
		t.Fatalf("after the kill the latest stored revision is %q, want pending-install: objects were applied that no stored revision names", st)
	}
	if err := env.Client.Delete(ctx, newApp(ns, "half", nil)); err != nil {
		t.Fatal(err)
	}
	restartConfined(t, env, ns, watchesFile)
	waitGone(t, env, appGVK, ns, "half", 2*time.Minute)
	testenv.Eventually(t, time.Minute, func(context.Context) error {
		if n := releasedConfigMapData(t, env, ns); len(n) > 0 {
			return fmt.Errorf("released ConfigMaps left behind: %v", n)
		}
		if n := len(releaseSecrets(t, env, ns, "half")); n > 0 {
			return fmt.Errorf("%d release Secrets left behind", n)
		}
		return nil
	})
}

// killWhen SIGKILLs the operator as soon as cond holds (polled every 5 ms
// for at most two minutes: an install under load is slow to start).
func killWhen(t *testing.T, p *process, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never saw %s", what)
		}
	}
	if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	p.done <- nil
}

// releasedConfigMapData counts the released ConfigMaps in ns by the data they hold.
func releasedConfigMapData(t *testing.T, env *testenv.Env, ns string) map[string]int {
	t.Helper()
	var cms corev1.ConfigMapList
	if err := env.Client.List(context.Background(), &cms, client.InNamespace(ns), client.MatchingLabels{api.LabelManaged: "true"}); err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, cm := range cms.Items {
		if d, ok := cm.Data["data"]; ok {
			n[d]++
		}
	}
	return n
}
