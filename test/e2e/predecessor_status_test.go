package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// The kinds of these tests. StatusApp's CRD is the one operator-sdk
// scaffolds for a Helm kind (spec and status hold anything), as a user
// switching from helm-operator-plugins or operator-sdk's Helm operator
// has it; CompatApp's is the one chartkeeper generates.
var (
	statusAppGVK = schema.GroupVersionKind{Group: "predecessor.chartkeeper.dev", Version: "v1", Kind: "StatusApp"}
	compatAppGVK = schema.GroupVersionKind{Group: "predecessor.chartkeeper.dev", Version: "v1", Kind: "CompatApp"}
)

// The predecessors' condition types, as they write them (the wire format
// scripts wait on: kubectl wait --for=condition=Deployed).
var predecessorTypes = []string{"Deployed", "Initialized", "Irreconcilable", "Paused", "ReleaseFailed"}

// staleManifest is the deployedRelease.manifest written before chartkeeper
// starts: a revision chartkeeper never made.
const staleManifest = "---\n# Source: app/templates/app.yaml\n# a manifest the predecessor deployed\n"

// The default: helm-operator-plugins' conditions and deployedRelease are
// gone after chartkeeper's first status write; another controller's
// condition stays as it was; Ready is True.
func TestPredecessorStatusIsRemoved(t *testing.T) {
	parallel(t, 40*time.Second)
	env := testenv.Cluster(t)
	installScaffoldedCRD(t, env, statusAppGVK)
	ns := env.Namespace(t)
	wf := kindWatches(t, statusAppGVK, "")
	audited := createWithPredecessorStatus(t, env, statusAppGVK, ns, "legacy", map[string]any{"port": 80})
	startConfined(t, env, ns, wf, "--metrics-bind-address", "0")
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{statusAppGVK}) })

	waitReadyAnd(t, env, statusAppGVK, ns, "legacy", func(int) error { return nil })
	u, st := readCR(t, env, statusAppGVK, ns, "legacy")
	for _, typ := range predecessorTypes {
		if c := condition(st, typ); c.Type != "" {
			t.Errorf("the predecessor's condition %s stayed: %+v", typ, c)
		}
	}
	if got := condition(st, "Audited"); !sameCondition(got, audited) {
		t.Errorf("another controller's condition changed: %+v, was %+v", got, audited)
	}
	if dr, found, _ := unstructured.NestedMap(u.Object, "status", "deployedRelease"); found {
		t.Errorf("status.deployedRelease stayed: %v", dr)
	}
}

// The opt-in (statusCompat: HelmOperator): chartkeeper maintains the
// predecessors' Deployed, ReleaseFailed, Irreconcilable, Initialized and
// status.deployedRelease: Deployed True at install, ReleaseFailed True
// (UpgradeError) and Deployed False while an upgrade the API server
// refuses is remediated, Deployed True (UpgradeSuccessful) again after the
// next good upgrade; deployedRelease is the release's, not the stale one.
func TestPredecessorStatusKeptWhenAsked(t *testing.T) {
	parallel(t, 90*time.Second)
	env := testenv.Cluster(t)
	installScaffoldedCRD(t, env, statusAppGVK)
	ns := env.Namespace(t)
	wf := kindWatches(t, statusAppGVK, "  statusCompat: HelmOperator\n  remediation:\n    retries: 1\n    backoff: {initial: 1s, max: 2s}\n")
	audited := createWithPredecessorStatus(t, env, statusAppGVK, ns, "kept", map[string]any{"port": 80})
	startConfined(t, env, ns, wf, "--metrics-bind-address", "0")
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{statusAppGVK}) })

	waitReadyAnd(t, env, statusAppGVK, ns, "kept", func(rev int) error {
		return wantCompat(env, statusAppGVK, ns, "kept", rev, metav1.ConditionTrue, "InstallSuccessful", "")
	})
	_, st := readCR(t, env, statusAppGVK, ns, "kept")
	if c := condition(st, "Paused"); c.Type != "" {
		t.Errorf("Paused (helm-operator-plugins' pause annotation, which chartkeeper does not read) stayed: %+v", c)
	}
	if got := condition(st, "Audited"); !sameCondition(got, audited) {
		t.Errorf("another controller's condition changed: %+v, was %+v", got, audited)
	}

	// An upgrade the API server refuses (a Service port out of range): the
	// upgrade fails and is rolled back.
	patchCR(t, env, statusAppGVK, ns, "kept", map[string]any{"port": 70000})
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		return wantCompat(env, statusAppGVK, ns, "kept", 0, metav1.ConditionFalse, "", "UpgradeError")
	})
	_, st = readCR(t, env, statusAppGVK, ns, "kept")
	if c := condition(st, "Irreconcilable"); c.Status != metav1.ConditionTrue || c.Reason != "ReconcileError" {
		t.Errorf("Irreconcilable %s %s, want True ReconcileError while the upgrade fails", c.Status, c.Reason)
	}

	// A good spec: an ordinary upgrade, Deployed True again.
	patchCR(t, env, statusAppGVK, ns, "kept", map[string]any{"port": 8080})
	// What a script written for the predecessors waits on.
	if out := kubectl(t, env, "-n", ns, "wait", "--for=condition=Deployed", "--timeout=2m", "statusapps/kept"); !strings.Contains(out, "condition met") {
		t.Errorf("kubectl wait --for=condition=Deployed: %s", out)
	}
	waitReadyAnd(t, env, statusAppGVK, ns, "kept", func(rev int) error {
		return wantCompatManifest(env, statusAppGVK, ns, "kept", rev, metav1.ConditionTrue, "UpgradeSuccessful", "", "port: 8080")
	})
}

// With the opt-in, the CRD chartkeeper generates holds
// status.deployedRelease (a structural schema prunes fields it does not
// name).
func TestPredecessorStatusInGeneratedCRD(t *testing.T) {
	parallel(t, 30*time.Second)
	env := testenv.Cluster(t)
	wf := kindWatches(t, compatAppGVK, "  statusCompat: HelmOperator\n")
	installCRDs(t, env, wf)
	ns := env.Namespace(t)
	startConfined(t, env, ns, wf, "--metrics-bind-address", "0")
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{compatAppGVK}) })
	if err := env.Client.Create(context.Background(), newCR(compatAppGVK, ns, "fresh", map[string]any{"port": 80})); err != nil {
		t.Fatal(err)
	}
	waitReadyAnd(t, env, compatAppGVK, ns, "fresh", func(rev int) error {
		return wantCompatManifest(env, compatAppGVK, ns, "fresh", rev, metav1.ConditionTrue, "InstallSuccessful", "", "kind: Deployment")
	})
}

// wantCompat checks the predecessor-shaped status of a resource: Deployed
// with status deployed and, when True, reason and deployedRelease naming
// the release (its manifest holding manifestHas, never the stale one);
// ReleaseFailed True with failedReason ("": False); Initialized True.
// rev > 0 is the revision Ready was found at.
func wantCompat(env *testenv.Env, gvk schema.GroupVersionKind, ns, name string, rev int, deployed metav1.ConditionStatus, reason, failedReason string) error {
	return wantCompatManifest(env, gvk, ns, name, rev, deployed, reason, failedReason, "")
}

func wantCompatManifest(env *testenv.Env, gvk schema.GroupVersionKind, ns, name string, rev int, deployed metav1.ConditionStatus, reason, failedReason, manifestHas string) error {
	u, st, err := getCR(context.Background(), env, gvk, ns, name)
	if err != nil {
		return err
	}
	gen := u.GetGeneration()
	d := condition(st, "Deployed")
	if d.Status != deployed || (reason != "" && d.Reason != reason) || d.ObservedGeneration != gen {
		return fmt.Errorf("Deployed %s %s (generation %d), want %s %s at generation %d: %+v", d.Status, d.Reason, d.ObservedGeneration, deployed, reason, gen, st.Conditions)
	}
	if i := condition(st, "Initialized"); i.Status != metav1.ConditionTrue {
		return fmt.Errorf("Initialized %q, want True", i.Status)
	}
	f := condition(st, "ReleaseFailed")
	switch {
	case failedReason == "" && f.Status != metav1.ConditionFalse:
		return fmt.Errorf("ReleaseFailed %s %s: %s, want False", f.Status, f.Reason, f.Message)
	case failedReason != "" && (f.Status != metav1.ConditionTrue || f.Reason != failedReason):
		return fmt.Errorf("ReleaseFailed %s %s, want True %s: %+v", f.Status, f.Reason, failedReason, st.Conditions)
	}
	if ir := condition(st, "Irreconcilable"); failedReason == "" && ir.Status != metav1.ConditionFalse {
		return fmt.Errorf("Irreconcilable %s %s: %s, want False", ir.Status, ir.Reason, ir.Message)
	}
	relName, _, _ := unstructured.NestedString(u.Object, "status", "deployedRelease", "name")
	manifest, _, _ := unstructured.NestedString(u.Object, "status", "deployedRelease", "manifest")
	if relName != name || manifest == staleManifest || !strings.Contains(manifest, "name: "+name) {
		return fmt.Errorf("deployedRelease {name %q, manifest %q}, want the release %s's", relName, manifest, name)
	}
	if manifestHas != "" && !strings.Contains(manifest, manifestHas) {
		return fmt.Errorf("deployedRelease.manifest does not hold %q: %s", manifestHas, manifest)
	}
	if deployed == metav1.ConditionTrue && rev > 0 {
		want := "UpgradeSuccessful"
		if rev == 1 {
			want = "InstallSuccessful"
		}
		if d.Reason != want {
			return fmt.Errorf("Deployed reason %s at revision %d, want %s", d.Reason, rev, want)
		}
	}
	return nil
}

// waitReadyAnd waits until the resource is Ready for its generation and
// check (given the revision) passes.
func waitReadyAnd(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string, check func(rev int) error) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		u, st, err := getCR(ctx, env, gvk, ns, name)
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionTrue || st.ObservedGeneration != u.GetGeneration() || st.Release == nil {
			return fmt.Errorf("not ready for generation %d: %+v", u.GetGeneration(), st.Conditions)
		}
		return check(st.Release.Revision)
	})
}

// readCR reads a resource and its status, failing the test on an error.
func readCR(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string) (*unstructured.Unstructured, api.Status) {
	t.Helper()
	u, st, err := getCR(context.Background(), env, gvk, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return u, st
}

// sameCondition compares what a condition says and when it last changed.
func sameCondition(a, b metav1.Condition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message &&
		a.LastTransitionTime.Equal(&b.LastTransitionTime) && a.ObservedGeneration == b.ObservedGeneration
}

// kindWatches writes a watches file of gvk released with the App chart of
// test/e2e/testdata, with policy (YAML fields indented by two spaces).
func kindWatches(t *testing.T, gvk schema.GroupVersionKind, policy string) string {
	t.Helper()
	chart := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "charts", "app")
	w := fmt.Sprintf("- group: %s\n  version: %s\n  kind: %s\n  chart: %q\n%s", gvk.Group, gvk.Version, gvk.Kind, chart, policy)
	file := filepath.Join(t.TempDir(), "watches.yaml")
	if err := os.WriteFile(file, []byte(w), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// installScaffoldedCRD creates the CRD of gvk as operator-sdk scaffolds it
// for a Helm kind (config/crd/bases): spec and status hold any field, with
// the status subresource. Tests sharing the kind apply the same CRD.
func installScaffoldedCRD(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind) {
	t.Helper()
	plural := strings.ToLower(gvk.Kind) + "s"
	anything := apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
	crd := &apiextv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + gvk.Group},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: gvk.Group,
			Names: apiextv1.CustomResourceDefinitionNames{Kind: gvk.Kind, ListKind: gvk.Kind + "List", Plural: plural, Singular: strings.ToLower(gvk.Kind)},
			Scope: apiextv1.NamespaceScoped,
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: gvk.Version, Served: true, Storage: true,
				Subresources: &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextv1.JSONSchemaProps{
						"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"},
						"spec": anything, "status": anything,
					},
				}},
			}},
		},
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		t.Fatal(err)
	}
	apply := client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: raw})
	if err := env.Client.Apply(context.Background(), apply, client.FieldOwner("e2e"), client.ForceOwnership); err != nil {
		t.Fatalf("applying CRD %s: %v", crd.Name, err)
	}
	waitEstablished(t, env, crd.Name)
	waitMapped(t, env, gvk)
}

// createWithPredecessorStatus creates a resource and writes, with the
// status subresource, the status helm-operator-plugins v0.9.1 leaves
// after an install (its updater's shape: conditions sorted by type, no
// reason or message where it gives none, deployedRelease {name,
// manifest}), plus a condition of another controller, which it returns.
func createWithPredecessorStatus(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string, spec map[string]any) metav1.Condition {
	t.Helper()
	ctx := context.Background()
	u := newCR(gvk, ns, name, spec)
	if err := env.Client.Create(ctx, u); err != nil {
		t.Fatal(err)
	}
	at := metav1.NewTime(time.Now().Add(-time.Hour).Truncate(time.Second))
	stamp := at.UTC().Format(time.RFC3339)
	audited := metav1.Condition{Type: "Audited", Status: metav1.ConditionTrue, Reason: "Checked",
		Message: "checked by example.com/auditor", LastTransitionTime: at, ObservedGeneration: u.GetGeneration()}
	cond := func(typ, status, reason, message string) map[string]any {
		c := map[string]any{"type": typ, "status": status, "lastTransitionTime": stamp}
		if reason != "" {
			c["reason"] = reason
		}
		if message != "" {
			c["message"] = message
		}
		return c
	}
	u.Object["status"] = map[string]any{
		"conditions": []any{
			map[string]any{"type": audited.Type, "status": string(audited.Status), "reason": audited.Reason,
				"message": audited.Message, "lastTransitionTime": stamp, "observedGeneration": audited.ObservedGeneration},
			cond("Deployed", "True", "InstallSuccessful", "release was successfully installed"),
			cond("Initialized", "True", "", ""),
			cond("Irreconcilable", "False", "", ""),
			cond("Paused", "False", "", ""),
			cond("ReleaseFailed", "False", "", ""),
		},
		"deployedRelease": map[string]any{"name": name, "manifest": staleManifest},
	}
	if err := env.Client.Status().Update(ctx, u); err != nil {
		t.Fatalf("writing the predecessor's status: %v", err)
	}
	return audited
}
