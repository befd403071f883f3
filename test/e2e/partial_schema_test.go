package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A chart whose values.schema.json describes only part of its values
// (test/corpus/kvstore) is packaged with create-api; on the real API
// server, with strict field validation (what kubectl apply uses), its CRD
// takes the generated sample and a custom resource setting keys documented
// only in values.yaml, keeps those keys, and still refuses a wrong type on
// a declared key with the field named.
func TestPartialSchemaCRDTakesUndeclaredKeys(t *testing.T) {
	// Its one cluster-scoped object is the CRD kvstores.foreign.chartkeeper.dev,
	// which no other test makes (the corpus walk's KVStore is of its own
	// group); it runs no operator.
	parallel(t, quick)
	env := testenv.Cluster(t)
	ctx := context.Background()
	proj, gvk, ns := foreignCRD(t, env, "kvstore", "KVStore")
	strict := client.FieldValidation("Strict")

	for _, s := range readSampleCRs(t, filepath.Join(proj, "config", "samples")) {
		s.SetNamespace(ns)
		if err := env.Client.Create(ctx, s, strict); err != nil {
			t.Errorf("the API server refused the generated sample: %v", err)
		}
	}

	spec := map[string]any{
		"master": map[string]any{
			"count":       int64(1), // declared
			"annotations": map[string]any{"team": "cache"},
			"service":     map[string]any{"ports": map[string]any{"redis": int64(6380)}},
		},
		"auth": map[string]any{"acl": map[string]any{"sentinel": true}},
	}
	if err := env.Client.Create(ctx, newCR(gvk, ns, "undeclared", spec), strict); err != nil {
		t.Fatalf("the API server refused keys documented only in values.yaml: %v", err)
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(gvk)
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "undeclared"}, got); err != nil {
		t.Fatal(err)
	}
	for _, path := range [][]string{{"spec", "master", "annotations", "team"}, {"spec", "master", "service", "ports", "redis"}, {"spec", "auth", "acl", "sentinel"}} {
		if _, found, _ := unstructured.NestedFieldNoCopy(got.Object, path...); !found {
			t.Errorf("%s was dropped by the API server", strings.Join(path, "."))
		}
	}

	err := env.Client.Create(ctx, newCR(gvk, ns, "wrongtype", map[string]any{"master": map[string]any{"count": "two"}}), strict)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.master.count") || !strings.Contains(err.Error(), "integer") {
		t.Errorf("want a wrong type on the declared spec.master.count refused, naming the field and its type; got %v", err)
	}
	t.Cleanup(func() {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		_ = env.Client.DeleteAllOf(context.Background(), u, client.InNamespace(ns))
	})
}

// foreignCRD packages the corpus chart with create-api as kind of
// foreignGroup (a group of its own: the corpus walk's kinds are another),
// applies its CRD and makes a namespace: a test of what the API server
// admits, with no operator. It returns the project, the kind and the
// namespace.
func foreignCRD(t *testing.T, env *testenv.Env, chart, kind string) (string, schema.GroupVersionKind, string) {
	t.Helper()
	proj := t.TempDir()
	chartkeeper(t, 0, "create-api", "--chart", filepath.Join(testenv.RepoRoot(), "test", "corpus", chart),
		"--group", foreignGroup, "--version", "v1alpha1", "--kind", kind, "--project-dir", proj)
	applyCRDs(t, env, filepath.Join(proj, "config", "crd", "bases"))
	return proj, schema.GroupVersionKind{Group: foreignGroup, Version: "v1alpha1", Kind: kind}, env.Namespace(t)
}
