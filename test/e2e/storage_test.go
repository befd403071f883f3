package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var bigReleaseGVK = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "BigRelease"}

// bigReleaseWatches writes a watches file for BigRelease over a copy of the
// dashboards test chart with three 700 KiB dashboards (incompressible
// text, as a dashboard full of panel data is nearly): the release's stored
// record (chart files and rendered manifest, gzipped) is about 3.5 MiB,
// over 3 MiB. storage is the watch's storage field ("": left unset).
func bigReleaseWatches(t *testing.T, storage string) string {
	t.Helper()
	return sizedDashboardsWatches(t, t.TempDir(), storage, 3, 700<<10)
}

// dashboardsWatches writes watches.yaml and the chart with boards large
// (640 KiB) dashboards into dir (written again over a previous call's).
func dashboardsWatches(t *testing.T, dir, storage string, boards int) string {
	t.Helper()
	return sizedDashboardsWatches(t, dir, storage, boards, 640<<10)
}

// sizedDashboardsWatches is dashboardsWatches with dashboards of size bytes.
func sizedDashboardsWatches(t *testing.T, dir, storage string, boards, size int) string {
	t.Helper()
	src := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "charts", "dashboards")
	dst := filepath.Join(dir, "charts", "dashboards")
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dst, "dashboards"), 0o755); err != nil {
		t.Fatal(err)
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	rnd := rand.New(rand.NewSource(17))
	for i := range boards {
		data := make([]byte, size)
		for j := range data {
			data[j] = alphabet[rnd.Intn(len(alphabet))]
		}
		board := fmt.Sprintf(`{"title":"Big %d","panels":[{"id":1,"type":"text","options":{"content":%q}}]}`, i, data)
		if err := os.WriteFile(filepath.Join(dst, "dashboards", fmt.Sprintf("big-%d.json", i)), []byte(board), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := `- group: test.chartkeeper.dev
  version: v1
  kind: BigRelease
  chart: charts/dashboards
  maxHistory: 5
  remediation:
    retries: 0
    backoff: {initial: 1s, max: 2s}
`
	if storage != "" {
		w += "  storage: " + storage + "\n"
	}
	file := filepath.Join(dir, "watches.yaml")
	if err := os.WriteFile(file, []byte(w), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// helmSecrets lists the Secrets of Helm's owner label in ns.
func helmSecrets(ctx context.Context, env *testenv.Env, ns string) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := env.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"owner": "helm"}); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// revisionStatuses reads the release's revisions from the chunked
// driver's index Secrets: version -> status.
func revisionStatuses(t *testing.T, env *testenv.Env, ns, name string) map[string]string {
	t.Helper()
	secrets, err := helmSecrets(context.Background(), env, ns)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range secrets {
		if s.Labels["name"] == name && s.Labels["type"] == "index" {
			out[s.Labels["version"]] = s.Labels["status"]
		}
	}
	return out
}

// A release whose stored record is over 3 MiB installs, upgrades, has a
// failed upgrade rolled back and uninstalls with storage: chunked; its
// revisions are index and chunk Secrets, each under 1 MiB, labelled so
// that the operator sees them.
func TestChunkedStorageKeepsLargeRelease(t *testing.T) {
	parallel(t, 55*time.Second)
	env, ns, _ := kindFixture(t, bigReleaseWatches(t, "chunked"), bigReleaseGVK)
	ctx := context.Background()
	if err := env.Client.Create(ctx, newCR(bigReleaseGVK, ns, "mon", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	waitCRReady(t, env, bigReleaseGVK, ns, "mon")

	secrets, err := helmSecrets(ctx, env, ns)
	if err != nil {
		t.Fatal(err)
	}
	stored, chunks := 0, 0
	for _, s := range secrets {
		size := 0
		for _, v := range s.Data {
			size += len(v)
		}
		if size > 1<<20 {
			t.Errorf("Secret %s holds %d bytes, over 1 MiB", s.Name, size)
		}
		if s.Labels[api.LabelManaged] != "true" {
			t.Errorf("Secret %s (%s) lacks the label %s: %v", s.Name, s.Labels["type"], api.LabelManaged, s.Labels)
		}
		if s.Labels["key"] == "sh.helm.release.v1.mon.v1" {
			stored += len(s.Data["chunk"])
			if s.Labels["type"] == "chunk" {
				chunks++
			}
		}
	}
	if stored <= 3<<20 || chunks == 0 {
		t.Fatalf("revision 1 is stored in %d bytes over %d chunk Secrets besides its index; want over 3 MiB in several", stored, chunks)
	}
	if out := helmCmd(t, env, "list", "-n", ns, "-q"); strings.Contains(out, "mon") {
		t.Errorf("helm list shows the chunked release (docs/watches.md says it does not):\n%s", out)
	}

	// An upgrade.
	patchCR(t, env, bigReleaseGVK, ns, "mon", map[string]any{"folder": "Ops"})
	waitCRReady(t, env, bigReleaseGVK, ns, "mon")
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "mon-big-0"}, cm); err != nil || cm.Annotations["grafana_folder"] != "Ops" {
		t.Fatalf("dashboard not upgraded: %v %v", cm.Annotations, err)
	}

	// A failed upgrade (70000 is not a valid port), rolled back.
	patchCR(t, env, bigReleaseGVK, ns, "mon", map[string]any{"service": map[string]any{"port": 70000}})
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, env, bigReleaseGVK, ns, "mon")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionRemediated); c.Status != metav1.ConditionTrue || c.Reason != string(api.ReasonRollbackSucceeded) {
			return fmt.Errorf("not rolled back yet: %+v", st.Conditions)
		}
		return nil
	})
	want := map[string]string{"1": "superseded", "2": "superseded", "3": "failed", "4": "deployed"}
	if got := revisionStatuses(t, env, ns, "mon"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("revisions = %v, want %v", got, want)
	}
	svc := &corev1.Service{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "mon"}, svc); err != nil || svc.Spec.Ports[0].Port != 80 {
		t.Errorf("service not at the last good port: %+v (err %v)", svc.Spec.Ports, err)
	}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "mon-big-2"}, cm); err != nil || cm.Annotations["grafana_folder"] != "Ops" {
		t.Errorf("dashboard not at the rolled-back revision: %v %v", cm.Annotations, err)
	}

	// Uninstall removes every index and chunk Secret.
	if err := env.Client.Delete(ctx, newCR(bigReleaseGVK, ns, "mon", nil)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env, bigReleaseGVK, ns, "mon", 2*time.Minute)
	if left, err := helmSecrets(ctx, env, ns); err != nil || len(left) > 0 {
		t.Errorf("%d release Secrets left after uninstall (err %v)", len(left), err)
	}
}

// With the default storage (one Secret per revision) the same release
// cannot be stored: the install is refused, before anything is applied,
// with a message that says why and what to set.
func TestSecretStorageRefusesLargeReleaseClearly(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := kindFixture(t, bigReleaseWatches(t, ""), bigReleaseGVK)
	ctx := context.Background()
	if err := env.Client.Create(ctx, newCR(bigReleaseGVK, ns, "mon", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	var released metav1.Condition
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, env, bigReleaseGVK, ns, "mon")
		if err != nil {
			return err
		}
		released = condition(st, api.ConditionReleased)
		if released.Status != metav1.ConditionFalse || condition(st, api.ConditionStalled).Status != metav1.ConditionTrue {
			return fmt.Errorf("not refused yet: %+v", st.Conditions)
		}
		return nil
	})
	for _, want := range []string{"1 MiB", "storage: chunked"} {
		if !strings.Contains(released.Message, want) {
			t.Errorf("Released message does not say %q: %s", want, released.Message)
		}
	}
	if secrets, err := helmSecrets(ctx, env, ns); err != nil || len(secrets) > 0 {
		t.Errorf("%d release Secrets stored (err %v)", len(secrets), err)
	}
	var cms corev1.ConfigMapList
	if err := env.Client.List(ctx, &cms, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/instance": "mon"}); err != nil || len(cms.Items) > 0 {
		t.Errorf("%d ConfigMaps applied (err %v)", len(cms.Items), err)
	}
}

// patchCR merges spec into a custom resource's spec.
func patchCR(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string, spec map[string]any) {
	t.Helper()
	b := fmt.Sprintf(`{"spec":%s}`, mustJSON(spec))
	if err := env.Client.Patch(context.Background(), newCR(gvk, ns, name, nil), client.RawPatch("application/merge-patch+json", []byte(b))); err != nil {
		t.Fatal(err)
	}
}

// Changing a kind's storage from secret to chunked with a release in
// place: the release is read as it was stored, upgraded (its revision 1
// updated where it is), and its new revision is stored chunked; it
// uninstalls without leftovers.
func TestStorageSwitchKeepsTheRelease(t *testing.T) {
	parallel(t, quick)
	dir := t.TempDir()
	watchesFile := dashboardsWatches(t, dir, "secret", 0)
	env, ns, op := kindFixture(t, watchesFile, bigReleaseGVK)
	ctx := context.Background()
	if err := env.Client.Create(ctx, newCR(bigReleaseGVK, ns, "mon", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	waitCRReady(t, env, bigReleaseGVK, ns, "mon")
	if out := helmCmd(t, env, "history", "mon", "-n", ns); !strings.Contains(out, "deployed") {
		t.Fatalf("helm history of the secret-stored release:\n%s", out)
	}

	if err := op.interrupt(t, time.Minute); err != nil {
		t.Fatalf("operator exit: %v", err)
	}
	dashboardsWatches(t, dir, "chunked", 0)
	startConfined(t, env, ns, watchesFile, "--metrics-bind-address", "0")

	patchCR(t, env, bigReleaseGVK, ns, "mon", map[string]any{"folder": "Ops"})
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		u, st, err := getCR(ctx, env, bigReleaseGVK, ns, "mon")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionTrue || st.ObservedGeneration != u.GetGeneration() || st.Release == nil || st.Release.Revision != 2 {
			return fmt.Errorf("not upgraded yet: %+v %+v", st.Release, st.Conditions)
		}
		return nil
	})
	// Revision 1 is updated where it is (a Secret of Helm's driver), never
	// deleted to be created chunked; revision 2 is stored chunked.
	want := map[string]string{"1": "superseded helm.sh/release.v1", "2": "deployed operatorframework.io/index.v1"}
	secrets, err := helmSecrets(ctx, env, ns)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range secrets {
		if s.Labels["name"] == "mon" {
			got[s.Labels["version"]] = s.Labels["status"] + " " + string(s.Type)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("revisions = %v, want %v", got, want)
	}

	if err := env.Client.Delete(ctx, newCR(bigReleaseGVK, ns, "mon", nil)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env, bigReleaseGVK, ns, "mon", 2*time.Minute)
	if left, err := helmSecrets(ctx, env, ns); err != nil || len(left) > 0 {
		t.Errorf("%d release Secrets left after uninstall (err %v)", len(left), err)
	}
}
