package e2e

import (
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// runPackaged runs what create-api wrote into proj, as a user would: its
// CRDs applied, the operator started on its watches.yaml as the
// ServiceAccount bound only to its generated ClusterRole, in a new
// namespace (everything removed when the test ends). It returns the
// namespace and the project's one sample, placed there but not created.
func runPackaged(t *testing.T, env *testenv.Env, proj string) (string, *unstructured.Unstructured) {
	t.Helper()
	crds := applyCRDs(t, env, filepath.Join(proj, "config", "crd", "bases"))
	ns := env.Namespace(t)
	startOperator(t, env, filepath.Join(proj, "watches.yaml"))
	t.Cleanup(func() { deleteAll(t, env, ns, crds) })
	samples := readSampleCRs(t, filepath.Join(proj, "config", "samples"))
	if len(samples) != 1 {
		t.Fatalf("want one sample, got %d", len(samples))
	}
	s := samples[0]
	s.SetNamespace(ns)
	return ns, s
}
