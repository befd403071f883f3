package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var appGVK = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "App"}

func testWatches() string {
	return filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches.yaml")
}

// installCRDs creates (or updates) the CRDs of a watches file and waits
// until they are established.
func installCRDs(t *testing.T, env *testenv.Env, watchesFile string) {
	t.Helper()
	ws, err := watches.Load(watchesFile)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, w := range ws {
		crd, _, err := manifests.CRD(w, nil, manifests.CRDOptions{})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: raw}
		if err := env.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("e2e"), client.ForceOwnership); err != nil {
			t.Fatalf("applying CRD %s: %v", crd.Name, err)
		}
		waitEstablished(t, env, crd.Name)
	}
}

// startOperator runs the chartkeeper binary on the shared cluster with a
// watches file and returns once it is ready.
// The operator runs as a ServiceAccount with only the generated RBAC
// (operatorKubeconfig), as it would when deployed.
func startOperator(t *testing.T, env *testenv.Env, watchesFile string, extra ...string) *process {
	t.Helper()
	return startOperatorAs(t, operatorKubeconfig(t, env, watchesFile), watchesFile, append([]string{"--metrics-bind-address", "0"}, extra...)...)
}

// startConfined runs the operator on watchesFile as the ServiceAccount of
// its generated RBAC (operatorKubeconfig), confined to ns by
// WATCH_NAMESPACE, and returns once it is ready.
func startConfined(t *testing.T, env *testenv.Env, ns, watchesFile string, extra ...string) *process {
	t.Helper()
	return startOperatorEnv(t, []string{"WATCH_NAMESPACE=" + ns}, operatorKubeconfig(t, env, watchesFile), watchesFile, extra...)
}

// startOperatorAs runs the operator with a given kubeconfig (several
// replicas of one ServiceAccount, say) and returns once it is ready.
func startOperatorAs(t *testing.T, kubeconfig, watchesFile string, extra ...string) *process {
	t.Helper()
	return startOperatorEnv(t, nil, kubeconfig, watchesFile, extra...)
}

// startOperatorEnv is startOperatorAs with environment variables added to
// the test's (WATCH_NAMESPACE, say).
func startOperatorEnv(t *testing.T, environ []string, kubeconfig, watchesFile string, extra ...string) *process {
	t.Helper()
	return startBinaryEnv(t, operatorBinary(t), environ, kubeconfig, watchesFile, extra...)
}

// e2eSigningKey is the Secret of the release signing key every operator
// the tests start shares (created by the first).
const e2eSigningKey = "default/chartkeeper-e2e-release-signing-key"

// startBinaryEnv is startOperatorEnv with another build of the operator
// (one with test hooks, say: see buildBinary).
func startBinaryEnv(t *testing.T, bin string, environ []string, kubeconfig, watchesFile string, extra ...string) *process {
	t.Helper()
	probe := freeAddr(t)
	args := append([]string{"run", "--kubeconfig", kubeconfig, "--watches-file", watchesFile,
		"--health-probe-bind-address", probe}, extra...)
	if !slices.ContainsFunc(extra, func(a string) bool { return strings.HasPrefix(a, "--release-signing-key") }) {
		// Each operator runs as a ServiceAccount of its own namespace; they
		// share one signing key, as the replicas of a deployment do, so
		// that a restarted operator trusts the revisions the last one wrote.
		args = append(args, "--release-signing-key", e2eSigningKey)
	}
	cmd := exec.Command(bin, args...)
	if environ != nil {
		cmd.Env = append(os.Environ(), environ...)
	}
	p := start(t, cmd)
	p.eventually(t, time.Minute, get200("http://"+probe+"/readyz"))
	return p
}

// kindFixture is the set-up of a test of the kinds of one watches file:
// their CRDs, a fresh namespace, and an operator confined to it with the
// generated RBAC. At the end the resources of kinds are deleted while the
// operator still runs (so finalizers go), then the operator is stopped.
func kindFixture(t *testing.T, watchesFile string, kinds ...schema.GroupVersionKind) (*testenv.Env, string, *process) {
	t.Helper()
	return confinedFixture(t, watchesFile, watchesFile, kinds, nil)
}

// appFixture is kindFixture for App releases under any watches file of the
// App kind, with extra operator flags; the App CRD always comes from
// testWatches(), so that tests running in parallel apply the same one.
func appFixture(t *testing.T, watchesFile string, extra ...string) (*testenv.Env, string, *process) {
	t.Helper()
	return confinedFixture(t, testWatches(), watchesFile, []schema.GroupVersionKind{appGVK}, extra)
}

// confinedFixture installs the CRDs of crdsFrom, makes a namespace and runs
// the operator on watchesFile confined to it by WATCH_NAMESPACE: what other
// tests leave behind, or do at the same time in theirs (doc.go: Parallel
// tests), cannot reach it.
func confinedFixture(t *testing.T, crdsFrom, watchesFile string, kinds []schema.GroupVersionKind, extra []string) (*testenv.Env, string, *process) {
	t.Helper()
	env := testenv.Cluster(t)
	installCRDs(t, env, crdsFrom)
	ns := env.Namespace(t)
	p := startConfined(t, env, ns, watchesFile,
		append([]string{"--metrics-bind-address", "0"}, extra...)...)
	t.Cleanup(func() { deleteAll(t, env, ns, kinds) })
	return env, ns, p
}

// newApp returns an App custom resource with spec.
func newApp(ns, name string, spec map[string]any) *unstructured.Unstructured {
	return newCR(appGVK, ns, name, spec)
}

// newCR returns a custom resource of any kind with spec.
func newCR(gvk schema.GroupVersionKind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// getApp reads an App and its status.
func getApp(ctx context.Context, env *testenv.Env, ns, name string) (*unstructured.Unstructured, api.Status, error) {
	return getCR(ctx, env, appGVK, ns, name)
}

// getCR reads a custom resource of any kind and its status.
func getCR(ctx context.Context, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, api.Status, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return nil, api.Status{}, err
	}
	st, err := api.StatusOf(u)
	return u, st, err
}

// bundledFixture runs the operator with the repository's own watches.yaml
// (the bundled charts) confined to a fresh namespace, its CRDs installed.
func bundledFixture(t *testing.T) (*testenv.Env, string) {
	t.Helper()
	env := testenv.Cluster(t)
	watchesFile := filepath.Join(testenv.RepoRoot(), "watches.yaml")
	installCRDs(t, env, watchesFile)
	ns := env.Namespace(t)
	startConfined(t, env, ns, watchesFile, "--metrics-bind-address", "0")
	return env, ns
}

// condition returns a condition of the status, or an empty one.
func condition(st api.Status, typ string) metav1.Condition {
	if c := meta.FindStatusCondition(st.Conditions, typ); c != nil {
		return *c
	}
	return metav1.Condition{}
}

// waitReady waits until the App is Ready for its current generation, at
// revision rev (0: any), and returns its status.
func waitReady(t *testing.T, env *testenv.Env, ns, name string, rev int) api.Status {
	t.Helper()
	var st api.Status
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		u, s, err := getApp(ctx, env, ns, name)
		if err != nil {
			return err
		}
		st = s
		ready := condition(s, api.ConditionReady)
		if ready.Status != metav1.ConditionTrue || s.ObservedGeneration != u.GetGeneration() {
			return fmt.Errorf("not ready for generation %d: %+v", u.GetGeneration(), s.Conditions)
		}
		if rev > 0 && (s.Release == nil || s.Release.Revision != rev) {
			return fmt.Errorf("ready at %+v, want revision %d", s.Release, rev)
		}
		return nil
	})
	return st
}

// patchSpec merges spec into the App's spec.
func patchSpec(t *testing.T, env *testenv.Env, ns, name string, spec map[string]any) {
	t.Helper()
	patchCR(t, env, appGVK, ns, name, spec)
}

// deleteApps deletes every App in ns and waits until they are gone (the
// operator must still run to remove its finalizer).
func deleteApps(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	deleteAll(t, env, ns, []schema.GroupVersionKind{appGVK})
}

// helmCmd runs the helm CLI against the shared cluster.
func helmCmd(t *testing.T, env *testenv.Env, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(testenv.BinDir(), "helm"), append(args, "--kubeconfig", env.Kubeconfig)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// waitGone waits until the custom resource is gone (its finalizer removed).
func waitGone(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string, within time.Duration) {
	t.Helper()
	testenv.Eventually(t, within, func(ctx context.Context) error {
		if _, _, err := getCR(ctx, env, gvk, ns, name); !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s %s/%s is still there (%v)", gvk.Kind, ns, name, err)
		}
		return nil
	})
}

// requestReconcile asks for a reconcile of App name with token
// (chartkeeper.dev/reconcile-requested-at), waits until the operator has
// handled it (status.lastHandledReconcileAt) and returns that status.
func requestReconcile(t *testing.T, env *testenv.Env, ns, name, token string) api.Status {
	t.Helper()
	patch := []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, api.AnnotationReconcileRequestedAt, token))
	if err := env.Client.Patch(context.Background(), newApp(ns, name, nil), client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	var handled api.Status
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getApp(ctx, env, ns, name)
		if err != nil {
			return err
		}
		if st.LastHandledReconcileAt != token {
			return fmt.Errorf("reconcile request %s not handled yet (last: %q)", token, st.LastHandledReconcileAt)
		}
		handled = st
		return nil
	})
	return handled
}

// appWatches writes a watches file of the App kind (test/e2e/testdata's
// charts/app) with policy (YAML fields of the watch, indented by two
// spaces) to a directory of the test, and returns its path.
func appWatches(t *testing.T, policy string) string {
	t.Helper()
	chart := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "charts", "app")
	w := fmt.Sprintf("- group: test.chartkeeper.dev\n  version: v1\n  kind: App\n  chart: %q\n%s", chart, policy)
	file := filepath.Join(t.TempDir(), "watches.yaml")
	if err := os.WriteFile(file, []byte(w), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}
