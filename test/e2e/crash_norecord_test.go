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

// A release without hooks is recorded once, with its outcome: an operator
// killed while it applies an upgrade leaves objects half upgraded and no
// record of the new revision. The next operator upgrades again from the
// revision on record and converges.
func TestKillMidUpgradeWithoutRecordConverges(t *testing.T) {
	env, ns, watchesFile, first := crashFixture(t)
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "big", map[string]any{"configMaps": 150})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "big", 1)
	patchSpec(t, env, ns, "big", map[string]any{"data": "v2", "configMaps": 150})
	killWhen(t, first, "the upgrade half applied", func() bool {
		v1, v2 := releasedConfigMapData(t, env, ns)
		return v1 > 0 && v2 > 0
	})
	if v := latestRevision(t, env, ns, "big"); v != 1 {
		t.Fatalf("after the kill the latest stored revision is %d, want 1 (the upgrade is recorded once, when done)", v)
	}

	startOperator(t, env, watchesFile)
	t.Cleanup(func() { deleteApps(t, env, ns) })
	testenv.Eventually(t, 2*time.Minute, func(context.Context) error {
		if st := latestReleaseStatus(t, env, ns, "big"); st != "deployed" {
			return fmt.Errorf("latest revision %s", st)
		}
		if v1, v2 := releasedConfigMapData(t, env, ns); v1 > 0 || v2 < 151 {
			return fmt.Errorf("ConfigMaps: %d at v1, %d at v2", v1, v2)
		}
		return nil
	})
	waitReady(t, env, ns, "big", 2)
}

// An operator killed while it applies an install leaves objects and no
// release record; the resource deleted meanwhile goes, and so does every
// object: each carries an ownerReference to it (that is what allows
// recording a revision once).
func TestKillMidInstallWithoutRecordLeavesNothing(t *testing.T) {
	env, ns, watchesFile, first := crashFixture(t)
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "half", map[string]any{"configMaps": 150})); err != nil {
		t.Fatal(err)
	}
	killWhen(t, first, "the install half applied", func() bool {
		v1, _ := releasedConfigMapData(t, env, ns)
		return v1 > 0
	})
	if n := len(releaseSecrets(t, env, ns, "half")); n != 0 {
		t.Fatalf("after the kill %d release Secrets are stored, want none (the install is recorded once, when done)", n)
	}
	if err := env.Client.Delete(ctx, newApp(ns, "half", nil)); err != nil {
		t.Fatal(err)
	}
	startOperator(t, env, watchesFile)
	waitGone(t, env, appGVK, ns, "half", time.Minute)
	testenv.Eventually(t, time.Minute, func(context.Context) error {
		if v1, v2 := releasedConfigMapData(t, env, ns); v1+v2 > 0 {
			return fmt.Errorf("%d released ConfigMaps left behind", v1+v2)
		}
		return nil
	})
}

// killWhen SIGKILLs the operator as soon as cond holds (polled every 5 ms
// for at most a minute).
func killWhen(t *testing.T, p *process, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
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

// releasedConfigMapData counts the released ConfigMaps in ns holding v1 and v2.
func releasedConfigMapData(t *testing.T, env *testenv.Env, ns string) (v1, v2 int) {
	t.Helper()
	var cms corev1.ConfigMapList
	if err := env.Client.List(context.Background(), &cms, client.InNamespace(ns), client.MatchingLabels{api.LabelManaged: "true"}); err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		switch cm.Data["data"] {
		case "v1":
			v1++
		case "v2":
			v2++
		}
	}
	return v1, v2
}
