package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// Every generated CRD is in the category chartkeeper and has a short name
// where one is free: kubectl get chartkeeper lists resources of every
// kind, kubectl get ha (HookApp's capitals) lists HookApps.
func TestKubectlCategoryAndShortNames(t *testing.T) {
	env := testenv.Cluster(t)
	installCRDs(t, env, filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-twokinds.yaml"))
	ns := env.Namespace(t)
	ctx := context.Background()
	for _, cr := range [...]struct{ kind, name string }{{"App", "cat-app"}, {"HookApp", "cat-hookapp"}} {
		gvk := appGVK
		gvk.Kind = cr.kind
		if err := env.Client.Create(ctx, newCR(gvk, ns, cr.name, map[string]any{})); err != nil {
			t.Fatal(err)
		}
	}
	all := kubectl(t, env, "get", "chartkeeper", "-A", "-o", "name")
	for _, want := range []string{"app.test.chartkeeper.dev/cat-app", "hookapp.test.chartkeeper.dev/cat-hookapp"} {
		if !strings.Contains(all, want+"\n") {
			t.Errorf("kubectl get chartkeeper -A does not list %s:\n%s", want, all)
		}
	}
	if got := kubectl(t, env, "get", "ha", "-n", ns, "-o", "name"); got != "hookapp.test.chartkeeper.dev/cat-hookapp\n" {
		t.Errorf("kubectl get ha = %q, want the HookApp", got)
	}
}

// kubectl describe shows the Events the operator records for each action
// (events.k8s.io/v1, regarding the custom resource): here an install and
// an upgrade.
func TestDescribeShowsActionEvents(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := appFixture(t, testWatches())
	if err := env.Client.Create(context.Background(), newApp(ns, "web", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "web", 1)
	patchSpec(t, env, ns, "web", map[string]any{"replicas": 2})
	waitReady(t, env, ns, "web", 2)
	var events string
	testenv.Eventually(t, time.Minute, func(context.Context) error {
		out := kubectl(t, env, "describe", "app", "web", "-n", ns)
		_, events, _ = strings.Cut(out, "\nEvents:")
		for _, reason := range []api.Reason{api.ReasonInstallSucceeded, api.ReasonUpgradeSucceeded} {
			if !strings.Contains(events, " "+string(reason)+" ") {
				return fmt.Errorf("the Events of kubectl describe lack %s:\n%s", reason, out)
			}
		}
		return nil
	})
}

// chartkeeper install-crds (what make run uses instead of kubectl) applies
// the generated CRDs to a cluster that answers and waits until they are
// Established.
func TestInstallCRDsAppliesTheGeneratedCRDs(t *testing.T) {
	env := testenv.Cluster(t)
	out, err := exec.Command(operatorBinary(t), "install-crds", "--kubeconfig", env.Kubeconfig,
		filepath.Join(testenv.RepoRoot(), "config", "crd", "bases")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "2 Established") {
		t.Fatalf("install-crds: %v\n%s", err, out)
	}
	for _, name := range []string{"webapps.apps.chartkeeper.dev", "etcdclusters.apps.chartkeeper.dev"} {
		waitEstablished(t, env, name)
	}
}
