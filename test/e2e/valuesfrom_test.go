package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var exporterGVK = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "Exporter"}

// valuesSourcesWatched is the operator's gauge of the ConfigMaps and
// Secrets it watches for valuesFrom.
const valuesSourcesWatched = "chartkeeper_values_sources_watched"

// docs/values-from.md, step by step: an Exporter takes shared defaults from
// an optional ConfigMap and its database password from its own Secret
// (watches-valuesfrom.yaml). A missing Secret is reported and heals when it
// is created; editing the ConfigMap or the Secret upgrades the release (the
// watch's backoff is 10 minutes: only the watch of those objects can do it
// within the test); the resource's spec wins over the ConfigMap. The
// password is in the rendered Secret and in no status, Event or log line,
// even when the chart's own check quotes it. Exactly the referenced
// objects are watched, shared between resources, and no longer once no
// resource refers to them.
func TestValuesFromConfigMapsAndSecrets(t *testing.T) {
	parallel(t, quick)
	env := testenv.Cluster(t)
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-valuesfrom.yaml")
	installCRDs(t, env, watchesFile)
	ns := env.Namespace(t)
	metricsAddr := freeAddr(t)
	op := startConfined(t, env, ns, watchesFile,
		"--metrics-bind-address", metricsAddr, "--zap-log-level=debug")
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{exporterGVK}) })
	metrics := "http://" + metricsAddr + "/metrics"
	ctx := context.Background()
	const pw1, pw2, short = "correct-horse-battery-1", "correct-horse-battery-2", "tooShort-9"

	// 1. The Exporter comes first: its Secret is missing.
	orders := newCR(exporterGVK, ns, "orders", map[string]any{"config": map[string]any{"datasource": map[string]any{"database": "orders"}}})
	if err := env.Client.Create(ctx, orders); err != nil {
		t.Fatal(err)
	}
	waitExporter(t, env, ns, "orders", api.ConditionReconciling, api.ReasonValuesSourceMissing, "Secret "+ns+"/orders-db", `"password"`)
	if revs := releaseSecrets(t, env, ns, "orders"); len(revs) != 0 {
		t.Fatalf("released without its password: %d revisions", len(revs))
	}

	// 2. Creating the Secret releases it.
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders-db"}, StringData: map[string]string{"password": pw1}}
	if err := env.Client.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	waitCRRevision(t, env, exporterGVK, ns, "orders", 1)
	wantRenderedPassword(t, env, ns, "orders-exporter", pw1)
	wantMetric(t, metrics, valuesSourcesWatched, 2) // the ConfigMap (optional, absent) and the Secret

	// 3. The shared defaults: the ConfigMap's host and sslmode are used,
	// the resource's own database wins over the ConfigMap's.
	defaults := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "exporter-defaults"},
		Data: map[string]string{"values.yaml": "config:\n  datasource:\n    host: db.example.internal\n    database: shared\n    sslmode: require\n"}}
	if err := env.Client.Create(ctx, defaults); err != nil {
		t.Fatal(err)
	}
	waitCRRevision(t, env, exporterGVK, ns, "orders", 2)
	if uri := exporterEnv(t, env, ns, "orders-exporter", "DATA_SOURCE_URI"); uri != "db.example.internal:5432/orders?sslmode=require" {
		t.Errorf("DATA_SOURCE_URI = %q, want the ConfigMap's host and sslmode with the spec's database", uri)
	}

	// 4. Editing the Secret upgrades the release.
	setPassword(t, env, ns, "orders-db", pw2)
	waitCRRevision(t, env, exporterGVK, ns, "orders", 3)
	wantRenderedPassword(t, env, ns, "orders-exporter", pw2)

	// 5. A password the chart refuses: its message quotes it, redacted.
	setPassword(t, env, ns, "orders-db", short)
	c := waitExporter(t, env, ns, "orders", api.ConditionStalled, api.ReasonChartError, "too short")
	if !strings.Contains(c.Message, "[redacted]") {
		t.Errorf("the chart's message should show the password as [redacted]: %q", c.Message)
	}
	setPassword(t, env, ns, "orders-db", pw2)
	waitExporterReady(t, env, ns, "orders", 3) // the values of revision 3 again: nothing to upgrade

	// 6. A second Exporter shares the ConfigMap's watch.
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "billing-db"},
		StringData: map[string]string{"password": "billing-password-1"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, newCR(exporterGVK, ns, "billing", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	waitCRRevision(t, env, exporterGVK, ns, "billing", 1)
	wantMetric(t, metrics, valuesSourcesWatched, 3)

	// 7. The Secret deleted: reported again; the release is left as it is.
	if err := env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders-db"}}); err != nil {
		t.Fatal(err)
	}
	waitExporter(t, env, ns, "orders", api.ConditionReconciling, api.ReasonValuesSourceMissing, "orders-db")
	if rev := latestRevision(t, env, ns, "orders"); rev != 3 {
		t.Errorf("the release is at revision %d after its Secret went, want 3 (left as it was)", rev)
	}

	// Nothing the operator wrote holds a password.
	wrote := operatorWrote(t, env, op, exporterGVK, ns, "orders")
	for _, where := range []string{"events", "operator log"} {
		if !strings.Contains(wrote[where], "too short") {
			t.Errorf("the %s should report the refused password: the scan would prove little", where)
		}
	}
	passwords := map[string]string{}
	for _, pw := range []string{pw1, pw2, short} {
		passwords["the password "+pw] = pw
		passwords["the password "+pw+" (base64)"] = base64.StdEncoding.EncodeToString([]byte(pw))
	}
	noLeaks(t, wrote, passwords)

	// 8. Deleting the Exporters: a missing Secret does not hold a deletion
	// up, and each object is watched only while a resource refers to it.
	if err := env.Client.Delete(ctx, newCR(exporterGVK, ns, "orders", nil)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env, exporterGVK, ns, "orders", 2*time.Minute)
	wantMetric(t, metrics, valuesSourcesWatched, 2) // billing's Secret and the shared ConfigMap
	if err := env.Client.Delete(ctx, newCR(exporterGVK, ns, "billing", nil)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env, exporterGVK, ns, "billing", 2*time.Minute)
	wantMetric(t, metrics, valuesSourcesWatched, 0)
}

// waitExporter waits until the Exporter's condition typ says reason for
// its generation (Ready False besides, when typ is Reconciling or
// Stalled), with a message holding each of msgs, and returns it.
func waitExporter(t *testing.T, env *testenv.Env, ns, name, typ string, reason api.Reason, msgs ...string) metav1.Condition {
	t.Helper()
	var c metav1.Condition
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		u, st, err := getCR(ctx, env, exporterGVK, ns, name)
		if err != nil {
			return err
		}
		c = condition(st, typ)
		ready := condition(st, api.ConditionReady)
		if c.Status != metav1.ConditionTrue || c.Reason != string(reason) || c.ObservedGeneration != u.GetGeneration() || ready.Status != metav1.ConditionFalse {
			return fmt.Errorf("want %s True %s and Ready False, got %+v", typ, reason, st.Conditions)
		}
		for _, m := range msgs {
			if !strings.Contains(c.Message, m) {
				return fmt.Errorf("the %s message %q does not say %q", typ, c.Message, m)
			}
		}
		return nil
	})
	return c
}

// waitExporterReady waits until the Exporter is Ready at revision rev,
// whatever it said before (Stalled, for values its Secret gave).
func waitExporterReady(t *testing.T, env *testenv.Env, ns, name string, rev int) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		u, st, err := getCR(ctx, env, exporterGVK, ns, name)
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionTrue || st.ObservedGeneration != u.GetGeneration() || st.Release == nil || st.Release.Revision != rev {
			return fmt.Errorf("not Ready at revision %d: release %+v, conditions %+v", rev, st.Release, st.Conditions)
		}
		return nil
	})
}

// setPassword sets the password of a Secret of the test.
func setPassword(t *testing.T, env *testenv.Env, ns, name, pw string) {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	mergePatch(t, env, s, fmt.Sprintf(`{"stringData":{"password":%q}}`, pw))
}

// wantRenderedPassword checks the password the chart rendered into its Secret.
func wantRenderedPassword(t *testing.T, env *testenv.Env, ns, name, want string) {
	t.Helper()
	if got := string(readSecret(t, env, ns, name).Data["data_source_password"]); got != want {
		t.Errorf("the chart's Secret %s holds the password %q, want %q", name, got, want)
	}
}

// exporterEnv returns the value of an environment variable of the
// exporter's container.
func exporterEnv(t *testing.T, env *testenv.Env, ns, name, key string) string {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, d); err != nil {
		t.Fatal(err)
	}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == key {
			return e.Value
		}
	}
	return ""
}

// wantMetric waits until a metric of the operator sums to want.
func wantMetric(t *testing.T, url, name string, want float64) {
	t.Helper()
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		if got := metric(ctx, url, name); got != want {
			return fmt.Errorf("%s = %v, want %v", name, got, want)
		}
		return nil
	})
}
