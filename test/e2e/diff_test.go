package e2e

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// chartkeeper diff plans what the operator plans (docs/plan-approve.md):
// an Exporter takes its database host from a ConfigMap and its user and
// password from a Secret (watches-approval-valuesfrom.yaml, upgrades
// approved by hand). The ConfigMap's host and the Secret's user change:
// the operator writes a plan; diff, from the resource's file (whose spec
// did not change), shows the host's change in the Deployment, names the
// digest the operator recorded, and prints no value a Secret gave: neither
// user (the live one nor the new one) nor the password, plain or base64.
func TestDiffTakesValuesFromAsTheOperatorDoes(t *testing.T) {
	parallel(t, quick)
	env := testenv.Cluster(t)
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-approval-valuesfrom.yaml")
	installCRDs(t, env, watchesFile)
	ns := env.Namespace(t)
	startConfined(t, env, ns, watchesFile, "--metrics-bind-address", "0")
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{exporterGVK}) })
	ctx := context.Background()
	const pw, user1, user2 = "correct-horse-battery-1", "exporter-user-0001", "exporter-user-0002"
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "orders-db"}, StringData: map[string]string{"password": pw, "user": user1}}
	defaults := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "exporter-defaults"},
		Data: map[string]string{"values.yaml": "config:\n  datasource:\n    host: db-one.example.internal\n"}}
	for _, obj := range []client.Object{secret, defaults} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	orders := newCR(exporterGVK, ns, "orders", map[string]any{"config": map[string]any{"datasource": map[string]any{"database": "orders"}}})
	if err := env.Client.Create(ctx, orders); err != nil {
		t.Fatal(err)
	}
	waitCRRevision(t, env, exporterGVK, ns, "orders", 1)
	if got := exporterEnv(t, env, ns, "orders-exporter", "DATA_SOURCE_USER"); got != user1 {
		t.Fatalf("DATA_SOURCE_USER = %q, want the Secret's %q", got, user1)
	}

	// The Secret, then the ConfigMap change (each makes a plan); the spec
	// does not.
	mergePatch(t, env, secret, `{"stringData":{"user":"`+user2+`"}}`)
	first := waitPlanCR(t, env, exporterGVK, ns, "orders", "")
	mergePatch(t, env, defaults, `{"data":{"values.yaml":"config:\n  datasource:\n    host: db-two.example.internal\n"}}`)
	plan := waitPlanCR(t, env, exporterGVK, ns, "orders", first.Digest)
	if dep := plannedUpdate(plan, "Deployment", "orders-exporter"); dep == nil || !slices.Contains(dep.Fields, "/spec/template/spec/containers/0/env/0/value") ||
		!slices.Contains(dep.Fields, "/spec/template/spec/containers/0/env/1/value") {
		t.Fatalf("the operator's plan does not update the Deployment's DATA_SOURCE_URI and DATA_SOURCE_USER: %+v", plan)
	}

	out := runDiffCR(t, env, exporterGVK, watchesFile, ns, "orders")
	for _, want := range []string{`(?m)^plan ` + plan.Digest + `:`, `--- Deployment ` + ns + `/orders-exporter \(live\)`,
		`(?m)^-\s+value: db-one\.example\.internal:5432/orders\?sslmode=disable$`,
		`(?m)^\+\s+value: db-two\.example\.internal:5432/orders\?sslmode=disable$`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("chartkeeper diff does not say %s:\n%s", want, out)
		}
	}
	for _, secret := range []string{pw, user1, user2, base64.StdEncoding.EncodeToString([]byte(pw)),
		base64.StdEncoding.EncodeToString([]byte(user1)), base64.StdEncoding.EncodeToString([]byte(user2))} {
		if strings.Contains(out, secret) {
			t.Errorf("chartkeeper diff prints a value from a Secret %q:\n%s", secret, out)
		}
	}
}
