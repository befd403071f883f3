package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// The predecessors' kinds: each test of a takeover has a kind of its own,
// whose CRD is shaped as operator-sdk scaffolds a Helm operator's (spec
// and status keep unknown fields; a status subresource), the CRD the
// users switching to chartkeeper have in their clusters.
const peerGroup = "peers.test.chartkeeper.dev"

func peerGVK(kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: peerGroup, Version: "v1", Kind: kind}
}

// peerFixture is the set-up of a takeover test: the kind's CRD as
// operator-sdk scaffolds it, a fresh namespace, and at the end the
// resources' finalizers stripped (whatever operator is left running).
func peerFixture(t *testing.T, kind string) (*testenv.Env, schema.GroupVersionKind, string) {
	t.Helper()
	env := testenv.Cluster(t)
	gvk := peerGVK(kind)
	installScaffoldedCRD(t, env, gvk)
	ns := env.Namespace(t)
	stripFinalizersAtEnd(t, env, gvk, ns)
	return env, gvk, ns
}

// peerWatches writes a watches file of one kind over test/e2e/testdata's
// app chart, given by absolute path (both predecessors and chartkeeper
// read it), with extra fields of the watch (each line indented by two
// spaces), and returns its path.
func peerWatches(t *testing.T, gvk schema.GroupVersionKind, extra string) string {
	t.Helper()
	chart := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "charts", "app")
	w := fmt.Sprintf("- group: %s\n  version: %s\n  kind: %s\n  chart: %q\n%s", gvk.Group, gvk.Version, gvk.Kind, chart, extra)
	file := filepath.Join(t.TempDir(), "watches.yaml")
	if err := os.WriteFile(file, []byte(w), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// peerChart is the chart of peerWatches.
func peerChart() string {
	return filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "charts", "app")
}

// helmOperatorBinary is helm-operator-plugins v0.9.1's helm-operator, which
// make peers builds into bin/.
func helmOperatorBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(testenv.BinDir(), "helm-operator")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("helm-operator-plugins' helm-operator is not built (make peers builds bin/helm-operator; make test does): %v", err)
	}
	return bin
}

// startPeer runs a predecessor operator (args: its command line, without
// the probe and metrics flags) with the admin kubeconfig, confined to ns
// by WATCH_NAMESPACE, and returns once it answers its readiness probe.
func startPeer(t *testing.T, env *testenv.Env, ns string, args ...string) *process {
	t.Helper()
	probe := freeAddr(t)
	cmd := exec.Command(args[0], append(slices.Clone(args[1:]), "--health-probe-bind-address", probe, "--metrics-bind-address", "0")...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig, "WATCH_NAMESPACE="+ns)
	p := start(t, cmd)
	p.eventually(t, time.Minute, get200("http://"+probe+"/readyz"))
	return p
}

// stopProcess stops an operator the way a rollout does (SIGINT, which it
// handles as SIGTERM) and fails the test if it does not stop in time.
func stopProcess(t *testing.T, p *process) {
	t.Helper()
	if err := p.interrupt(t, 30*time.Second); err != nil {
		t.Logf("%s exited: %v", p.cmd.Args[0], err)
	}
}

// logErrors returns the lines of an operator's log at level error
// (controller-runtime's zap logger, JSON or console).
func logErrors(out string) []string {
	var errs []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, `"level":"error"`) || strings.Contains(l, "\tERROR\t") {
			errs = append(errs, l)
		}
	}
	return errs
}

// stripFinalizersAtEnd removes every finalizer from the kind's resources in
// ns when the test ends, after its operators stopped (t.Cleanup runs it
// last when registered first), so a failed test leaves nothing stuck.
func stripFinalizersAtEnd(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns string) {
	t.Helper()
	t.Cleanup(func() {
		ctx := context.Background()
		var list unstructured.UnstructuredList
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return
		}
		for i := range list.Items {
			_ = env.Client.Patch(ctx, &list.Items[i], client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
		}
	})
}

// releasedUIDs maps each released object in ns (Deployments, Services and
// ConfigMaps Helm annotated with a release name) to its UID.
func releasedUIDs(t *testing.T, env *testenv.Env, ns string) map[string]types.UID {
	t.Helper()
	ctx := context.Background()
	var deps appsv1.DeploymentList
	var svcs corev1.ServiceList
	var cms corev1.ConfigMapList
	for _, l := range []client.ObjectList{&deps, &svcs, &cms} {
		if err := env.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]types.UID{}
	add := func(kind string, o metav1.Object) {
		if o.GetAnnotations()["meta.helm.sh/release-name"] != "" {
			out[kind+" "+o.GetName()] = o.GetUID()
		}
	}
	for i := range deps.Items {
		add("Deployment", &deps.Items[i])
	}
	for i := range svcs.Items {
		add("Service", &svcs.Items[i])
	}
	for i := range cms.Items {
		add("ConfigMap", &cms.Items[i])
	}
	return out
}

// sameUIDs fails the test unless every object of before is there with the
// same UID.
func sameUIDs(t *testing.T, env *testenv.Env, ns string, before map[string]types.UID) {
	t.Helper()
	after := releasedUIDs(t, env, ns)
	for _, k := range slices.Sorted(maps.Keys(before)) {
		switch uid, ok := after[k]; {
		case !ok:
			t.Errorf("%s is gone", k)
		case uid != before[k]:
			t.Errorf("%s was recreated: UID %s, was %s", k, uid, before[k])
		}
	}
}

// revisions lists the release's stored revision numbers in ns (from
// Helm's owner=helm labels: the Secret driver's Secrets and the chunked
// driver's index Secrets), sorted.
func revisions(t *testing.T, env *testenv.Env, ns, name string) []string {
	t.Helper()
	var vs []string
	for _, s := range releaseSecrets(t, env, ns, name) {
		vs = append(vs, s.Labels["version"])
	}
	slices.Sort(vs)
	return vs
}

// storageLeft lists the Secrets of the release's storage left in ns (the
// Secret driver's, and the chunked driver's index and chunk Secrets, all
// named after the release's storage key).
func storageLeft(ctx context.Context, env *testenv.Env, ns, name string) ([]string, error) {
	var list corev1.SecretList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var left []string
	for _, s := range list.Items {
		if strings.HasPrefix(s.Name, "sh.helm.release.v1."+name+".") {
			left = append(left, s.Name)
		}
	}
	return left, nil
}

// waitTakenOver waits until chartkeeper reports each resource Ready at
// revision rev, and checks that the release has no revision beyond it.
func waitTakenOver(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns string, names []string, rev int) {
	t.Helper()
	for _, name := range names {
		waitCRRevision(t, env, gvk, ns, name, rev)
		if got, want := revisions(t, env, ns, name), revisionList(rev); !slices.Equal(got, want) {
			t.Errorf("%s: stored revisions %v after the takeover, want %v", name, got, want)
		}
	}
}

// revisionList is "1".."n" in the order revisions sorts them (all have
// one digit here).
func revisionList(n int) []string {
	var out []string
	for i := 1; i <= n; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

// deleteAndWaitUninstalled deletes a resource and waits, for at most a
// minute, until it is gone and its release's storage with it, then checks
// that chartkeeper uninstalled the release (its UninstallSucceeded Event:
// the garbage collector alone, following the predecessors' owner
// references, would have left no Event).
func deleteAndWaitUninstalled(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string) {
	t.Helper()
	ctx := context.Background()
	cr, _, err := getCR(ctx, env, gvk, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, cr); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		u, _, err := getCR(ctx, env, gvk, ns, name)
		if err == nil {
			return fmt.Errorf("%s %s is still there, finalizers %v", gvk.Kind, name, u.GetFinalizers())
		}
		if !apierrors.IsNotFound(err) {
			return err
		}
		left, err := storageLeft(ctx, env, ns, name)
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("%s is gone, but its release's Secrets are left: %v", name, left)
		}
		return nil
	})
	var evs eventsv1.EventList
	if err := env.Client.List(ctx, &evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Items {
		if ev.Regarding.UID == cr.GetUID() && ev.Reason == string(api.ReasonUninstallSucceeded) {
			return
		}
	}
	t.Errorf("%s is gone, but chartkeeper recorded no %s Event for it", name, api.ReasonUninstallSucceeded)
}
