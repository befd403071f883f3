package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var (
	hopAppGVK       = schema.GroupVersionKind{Group: "predecessor.chartkeeper.dev", Version: "v1", Kind: "HopApp"}
	hopCompatAppGVK = schema.GroupVersionKind{Group: "predecessor.chartkeeper.dev", Version: "v1", Kind: "HopCompatApp"}
)

// hopNames names the resource of each kind (and its release).
var hopNames = map[schema.GroupVersionKind]string{hopAppGVK: "plain", hopCompatAppGVK: "compat"}

// hopFinalizer is helm-operator-plugins' uninstall finalizer.
const hopFinalizer = "uninstall-helm-release"

// The status exactly as the pinned helm-operator-plugins (bin/helm-operator,
// make peers) writes it, then chartkeeper on the same resources (adopt:
// true takes its releases over): by default its conditions and
// deployedRelease go and another controller's condition stays; with
// statusCompat: HelmOperator they are chartkeeper's, naming its release.
func TestPredecessorStatusAfterHelmOperatorPlugins(t *testing.T) {
	parallel(t, 60*time.Second)
	env := testenv.Cluster(t)
	hop := filepath.Join(testenv.BinDir(), "helm-operator")
	if _, err := os.Stat(hop); err != nil {
		t.Fatalf("helm-operator-plugins' binary: %v (make peers builds it)", err)
	}
	kinds := []schema.GroupVersionKind{hopAppGVK, hopCompatAppGVK}
	for _, gvk := range kinds {
		installScaffoldedCRD(t, env, gvk)
	}
	ns := env.Namespace(t)
	chart := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "charts", "app")
	hopWatches := filepath.Join(t.TempDir(), "watches.yaml")
	var w string
	for _, gvk := range kinds {
		w += fmt.Sprintf("- group: %s\n  version: %s\n  kind: %s\n  chart: %q\n", gvk.Group, gvk.Version, gvk.Kind, chart)
	}
	if err := os.WriteFile(hopWatches, []byte(w), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(hop, "run", "--watches-file", hopWatches, "--metrics-bind-address", "0",
		"--health-probe-bind-address", freeAddr(t), "--leader-elect=false")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig, "WATCH_NAMESPACE="+ns)
	peer := start(t, cmd)
	ctx := context.Background()
	for _, gvk := range kinds {
		if err := env.Client.Create(ctx, newCR(gvk, ns, hopNames[gvk], map[string]any{"port": 80})); err != nil {
			t.Fatal(err)
		}
		peer.eventually(t, 2*time.Minute, func(ctx context.Context) error {
			u, st, err := getCR(ctx, env, gvk, ns, hopNames[gvk])
			if err != nil {
				return err
			}
			name, _, _ := unstructured.NestedString(u.Object, "status", "deployedRelease", "name")
			if c := condition(st, "Deployed"); c.Status != metav1.ConditionTrue || name != hopNames[gvk] {
				return fmt.Errorf("helm-operator-plugins has not deployed %s yet: %+v", gvk.Kind, st.Conditions)
			}
			return nil
		})
	}
	if err := peer.interrupt(t, 30*time.Second); err != nil {
		t.Logf("helm-operator-plugins stopped: %v", err)
	}
	audited := map[schema.GroupVersionKind]metav1.Condition{}
	for _, gvk := range kinds {
		audited[gvk] = addCondition(t, env, gvk, ns, hopNames[gvk])
	}

	wf := filepath.Join(t.TempDir(), "watches.yaml")
	w = fmt.Sprintf("- group: %s\n  version: v1\n  kind: %s\n  chart: %q\n  adopt: true\n", hopAppGVK.Group, hopAppGVK.Kind, chart) +
		fmt.Sprintf("- group: %s\n  version: v1\n  kind: %s\n  chart: %q\n  adopt: true\n  statusCompat: HelmOperator\n", hopCompatAppGVK.Group, hopCompatAppGVK.Kind, chart)
	if err := os.WriteFile(wf, []byte(w), 0o644); err != nil {
		t.Fatal(err)
	}
	startConfined(t, env, ns, wf, "--metrics-bind-address", "0")
	t.Cleanup(func() {
		for _, gvk := range kinds { // the finalizer of the stopped helm-operator-plugins
			dropFinalizer(t, env, gvk, ns, hopNames[gvk], hopFinalizer)
		}
		deleteAll(t, env, ns, kinds)
	})

	waitReadyAnd(t, env, hopAppGVK, ns, "plain", func(int) error { return nil })
	u, st := readCR(t, env, hopAppGVK, ns, "plain")
	for _, typ := range predecessorTypes {
		if c := condition(st, typ); c.Type != "" {
			t.Errorf("helm-operator-plugins' condition %s stayed: %+v", typ, c)
		}
	}
	if dr, found, _ := unstructured.NestedMap(u.Object, "status", "deployedRelease"); found {
		t.Errorf("status.deployedRelease stayed: %v", dr)
	}
	if got := condition(st, "Audited"); !sameCondition(got, audited[hopAppGVK]) {
		t.Errorf("another controller's condition changed: %+v, was %+v", got, audited[hopAppGVK])
	}

	waitReadyAnd(t, env, hopCompatAppGVK, ns, "compat", func(rev int) error {
		return wantCompatManifest(env, hopCompatAppGVK, ns, "compat", rev, metav1.ConditionTrue, "", "", "kind: Deployment")
	})
	_, st = readCR(t, env, hopCompatAppGVK, ns, "compat")
	if c := condition(st, "Paused"); c.Type != "" {
		t.Errorf("Paused stayed: %+v", c)
	}
	if got := condition(st, "Audited"); !sameCondition(got, audited[hopCompatAppGVK]) {
		t.Errorf("another controller's condition changed: %+v, was %+v", got, audited[hopCompatAppGVK])
	}
}

// addCondition adds a condition of another controller (type Audited) to a
// resource's status with the status subresource, and returns it.
func addCondition(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string) metav1.Condition {
	t.Helper()
	at := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	c := metav1.Condition{Type: "Audited", Status: metav1.ConditionTrue, Reason: "Checked", Message: "checked by example.com/auditor", LastTransitionTime: at}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, _, err := getCR(context.Background(), env, gvk, ns, name)
		if err != nil {
			return err
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		conds = append(conds, map[string]any{"type": c.Type, "status": string(c.Status), "reason": c.Reason,
			"message": c.Message, "lastTransitionTime": at.UTC().Format(time.RFC3339)})
		if err := unstructured.SetNestedSlice(u.Object, conds, "status", "conditions"); err != nil {
			return err
		}
		return env.Client.Status().Update(context.Background(), u)
	})
	if err != nil {
		t.Fatalf("adding a condition to %s %s/%s: %v", gvk.Kind, ns, name, err)
	}
	return c
}

// dropFinalizer removes one finalizer from a resource, keeping the others.
func dropFinalizer(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name, finalizer string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, _, err := getCR(context.Background(), env, gvk, ns, name)
		if err != nil {
			return err
		}
		fs := u.GetFinalizers()
		if !slices.Contains(fs, finalizer) {
			return nil
		}
		u.SetFinalizers(slices.DeleteFunc(fs, func(f string) bool { return f == finalizer }))
		return env.Client.Update(context.Background(), u)
	})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("removing the finalizer %s of %s %s/%s: %v", finalizer, gvk.Kind, ns, name, err)
	}
}
