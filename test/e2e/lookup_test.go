package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var (
	lookupAppGVK        = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "LookupApp"}
	trustedLookupAppGVK = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "TrustedLookupApp"}
)

// The values of the Secrets the tests look up (their base64 has no
// padding nor "/": it can be an annotation key).
const (
	otherToken = "s3cretOtherNamespaceTokn"
	localToken = "localNamespaceTokenValue"
)

// secretLookup is a value the chart renders with tpl: the token of a
// Secret, or "absent".
func secretLookup(ns, name string) string {
	return fmt.Sprintf(`{{ dig "data" "token" "absent" (lookup "v1" "Secret" %q %q) }}`, ns, name)
}

// docs/watches.md, lookup: by default a chart's lookup reads only the
// release namespace. The lookupapp chart renders its user values with tpl
// (as Bitnami's common library does), so a resource's values can call
// lookup. Under the default, a LookupApp (rendered with the operator's
// credentials, which may read every Secret of the cluster for release
// storage) cannot copy a Secret of another namespace into its ConfigMap:
// neither by name nor by listing every namespace's Secrets. A
// cluster-scoped kind reads as absent. The
// Secrets of the release namespace are still read. The same holds for
// the render of a plan (upgrade.approval: manual): the plan of a change
// whose annotation key would be the other namespace's token lists the
// key "absent".
func TestLookupReadsOnlyTheReleaseNamespace(t *testing.T) {
	parallel(t, quick)
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-lookup.yaml")
	env, ns, _ := kindFixture(t, watchesFile, lookupAppGVK)
	other := env.Namespace(t)
	ctx := context.Background()
	createAll(t, env,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "token"}, StringData: map[string]string{"token": otherToken}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "local"}, StringData: map[string]string{"token": localToken}})

	listAll := `{{ range $s := dig "items" (list) (lookup "v1" "Secret" "" "") }}{{ dig "data" "token" "" $s }},{{ end }}`
	spec := map[string]any{"extraEnvVars": []any{
		map[string]any{"name": "OTHER", "value": secretLookup(other, "token")},
		map[string]any{"name": "ALL", "value": listAll},
		map[string]any{"name": "LOCAL", "value": secretLookup(ns, "local")},
	}}
	if err := env.Client.Create(ctx, newCR(lookupAppGVK, ns, "web", spec)); err != nil {
		t.Fatal(err)
	}
	waitCRReady(t, env, lookupAppGVK, ns, "web")

	data := settings(t, env, ns, "web")
	leaked := base64.StdEncoding.EncodeToString([]byte(otherToken))
	if data["OTHER"] != "absent" {
		t.Errorf("a lookup of Secret %s/token from release namespace %s read %q, want absent", other, ns, data["OTHER"])
	}
	for k, v := range data {
		if strings.Contains(v, leaked) || strings.Contains(v, otherToken) {
			t.Errorf("the ConfigMap's %s holds Secret %s/token: %q", k, other, v)
		}
	}
	if want := base64.StdEncoding.EncodeToString([]byte(localToken)); data["LOCAL"] != want {
		t.Errorf("a lookup in the release namespace read %q, want %q", data["LOCAL"], want)
	}

	// The plan's render: the change's annotation key would be the token.
	patchCR(t, env, lookupAppGVK, ns, "web", map[string]any{"podAnnotations": map[string]any{secretLookup(other, "token"): "looked-up"}})
	var plan *api.PlanStatus
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, env, lookupAppGVK, ns, "web")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionPlanReady); st.Plan == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("no plan: %+v %+v", st.Plan, st.Conditions)
		}
		plan = st.Plan
		return nil
	})
	raw, _ := json.Marshal(plan)
	if strings.Contains(string(raw), leaked) {
		t.Errorf("the plan names Secret %s/token's value: %s", other, raw)
	}
	cm := plannedObject(plan.Update, "ConfigMap", "web-settings")
	if cm == nil || !slices.Contains(cm.Fields, "/metadata/annotations/absent") {
		t.Errorf("the plan does not add the annotation absent to the ConfigMap: %s", raw)
	}

	// A cluster-scoped kind (which the operator may not even read).
	clusterScoped := map[string]any{"extraEnvVars": []any{
		map[string]any{"name": "NAMESPACE", "value": fmt.Sprintf(`{{ dig "metadata" "name" "absent" (lookup "v1" "Namespace" "" %q) }}`, other)},
	}}
	if err := env.Client.Create(ctx, newCR(lookupAppGVK, ns, "cluster", clusterScoped)); err != nil {
		t.Fatal(err)
	}
	waitCRReady(t, env, lookupAppGVK, ns, "cluster")
	if got := settings(t, env, ns, "cluster")["NAMESPACE"]; got != "absent" {
		t.Errorf("a lookup of Namespace %s (cluster-scoped) read %q, want absent", other, got)
	}
}

// lookup: Cluster opens lookup to what the operator may read (a
// single-tenant cluster's choice): the TrustedLookupApp reads the Secret
// of another namespace.
func TestLookupClusterReadsOtherNamespaces(t *testing.T) {
	parallel(t, quick)
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-lookup-cluster.yaml")
	env, ns, _ := kindFixture(t, watchesFile, trustedLookupAppGVK)
	other := env.Namespace(t)
	createAll(t, env, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: other, Name: "token"}, StringData: map[string]string{"token": otherToken}})
	spec := map[string]any{"extraEnvVars": []any{map[string]any{"name": "OTHER", "value": secretLookup(other, "token")}}}
	if err := env.Client.Create(context.Background(), newCR(trustedLookupAppGVK, ns, "web", spec)); err != nil {
		t.Fatal(err)
	}
	waitCRReady(t, env, trustedLookupAppGVK, ns, "web")
	if got, want := settings(t, env, ns, "web")["OTHER"], base64.StdEncoding.EncodeToString([]byte(otherToken)); got != want {
		t.Errorf("with lookup: Cluster, a lookup of Secret %s/token read %q, want %q", other, got, want)
	}
}

// settings is the data of a lookupapp release's ConfigMap.
func settings(t *testing.T, env *testenv.Env, ns, release string) map[string]string {
	t.Helper()
	var cm corev1.ConfigMap
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: release + "-settings"}, &cm); err != nil {
		t.Fatal(err)
	}
	return cm.Data
}

// plannedObject finds an object of a plan's list.
func plannedObject(objs []api.PlannedObject, kind, name string) *api.PlannedObject {
	for i := range objs {
		if objs[i].Kind == kind && objs[i].Name == name {
			return &objs[i]
		}
	}
	return nil
}
