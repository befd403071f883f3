package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/internal/watches"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A chart whose stored release record is over the 1 MiB one Secret holds
// (a dashboard bundle) is packaged with create-api, unedited: create-api
// measures the record, writes `storage: chunked` into the watch and says
// so with the size; the sample then becomes Ready under an operator that
// runs as a ServiceAccount bound only to the generated ClusterRole.
// BoardBundle is the test's own kind (its CRD no other test makes): its
// operator may watch all namespaces (doc.go: Parallel tests).
func TestCreateAPIChoosesChunkedStorageForLargeRelease(t *testing.T) {
	parallel(t, 20*time.Second)
	src := t.TempDir()
	dashboardsWatches(t, src, "", 1) // one 640 KiB dashboard: a record of about 1.5 MiB
	chart := filepath.Join(src, "charts", "dashboards")
	proj := t.TempDir()
	args := []string{"create-api", "--chart", chart, "--group", "test.chartkeeper.dev", "--version", "v1",
		"--kind", "BoardBundle", "--project-dir", proj}
	out := chartkeeper(t, 0, args...)
	if !strings.Contains(out, "storage: chunked") || !strings.Contains(out, "MiB") {
		t.Errorf("create-api does not say it chose chunked storage, with the size:\n%s", out)
	}
	watchesFile := filepath.Join(proj, "watches.yaml")
	ws, err := watches.Load(watchesFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || ws[0].Storage != watches.StorageChunked {
		b, _ := os.ReadFile(watchesFile)
		t.Fatalf("watches.yaml does not choose chunked storage:\n%s", b)
	}
	// A second run changes nothing.
	if again := chartkeeper(t, 0, args...); strings.Contains(again, "created") || strings.Contains(again, "updated") {
		t.Errorf("second create-api changed files:\n%s", again)
	}

	env := testenv.Cluster(t)
	ns, s := runPackaged(t, env, proj)
	if err := env.Client.Create(context.Background(), s); err != nil {
		t.Fatalf("creating the sample: %v", err)
	}
	waitCRReady(t, env, s.GroupVersionKind(), ns, s.GetName())
	if got := revisionStatuses(t, env, ns, s.GetName()); got["1"] != "deployed" {
		t.Errorf("chunked index revisions = %v, want revision 1 deployed", got)
	}
}

// A chart whose values.yaml breaks its own schema (a default outside the
// schema's enum) gets a CRD that refuses the sample create-api would
// write: create-api says which field, exits non-zero and writes nothing.
func TestCreateAPIRefusesASampleItsCRDRefuses(t *testing.T) {
	parallel(t, quick) // no cluster
	proj := t.TempDir()
	chart := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "charts", "loglevels")
	out := chartkeeper(t, 1, "create-api", "--chart", chart, "--group", "test.chartkeeper.dev", "--version", "v1",
		"--kind", "LogServer", "--project-dir", proj)
	for _, want := range []string{"sample", "spec.adminEmail", "email"} {
		if !strings.Contains(out, want) {
			t.Errorf("create-api does not say %q:\n%s", want, out)
		}
	}
	left, err := os.ReadDir(proj)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("create-api left %s behind", e.Name())
	}
}
