package scaffold

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const chartSrc = "../crdschema/testdata/plain-chart"

func TestCreateAPIIsIdempotent(t *testing.T) {
	proj := t.TempDir()
	existing := "# our watches\n- group: apps.example.com\n  version: v1\n  kind: Other\n  chart: charts/other # kept\n"
	if err := os.WriteFile(filepath.Join(proj, "watches.yaml"), []byte(existing), 0o644); err != nil {
		t.Fatal(err)
	}
	o := Options{ProjectDir: proj, Chart: chartSrc, Group: "apps.example.com", Version: "v1alpha1", Kind: "Plain", Hook: true}
	first := mustCreate(t, o)
	if got := actions(first); got != "created charts/plain-chart, updated watches.yaml, created internal/apps/plain/hook.go, created internal/apps/all/zz_generated.go" {
		t.Errorf("first run: %s", got)
	}
	b, _ := os.ReadFile(filepath.Join(proj, "watches.yaml"))
	want := existing + "- group: apps.example.com\n  version: v1alpha1\n  kind: Plain\n  chart: charts/plain-chart\n"
	if string(b) != want {
		t.Errorf("watches.yaml:\n%s", b)
	}
	second := mustCreate(t, o)
	if got := actions(second); got != "unchanged charts/plain-chart, unchanged watches.yaml, unchanged internal/apps/plain/hook.go, unchanged internal/apps/all/zz_generated.go" {
		t.Errorf("second run: %s", got)
	}
	// A new version moves the entry (comments kept), nothing else.
	o.Version = "v1beta1"
	third := mustCreate(t, o)
	if got := actions(third); got != "unchanged charts/plain-chart, updated watches.yaml, unchanged internal/apps/plain/hook.go, unchanged internal/apps/all/zz_generated.go" {
		t.Errorf("new version: %s", got)
	}
	b, _ = os.ReadFile(filepath.Join(proj, "watches.yaml"))
	if !strings.Contains(string(b), "version: v1beta1") || !strings.Contains(string(b), "# our watches") || !strings.Contains(string(b), "# kept") {
		t.Errorf("watches.yaml after a version change:\n%s", b)
	}
}

func TestCreateAPIRefusesAndRollsBack(t *testing.T) {
	proj := t.TempDir()
	o := Options{ProjectDir: proj, Chart: chartSrc, Group: "apps.example.com", Version: "v1", Kind: "Plain"}
	for _, bad := range []Options{
		{ProjectDir: proj, Chart: "nope", Group: "apps.example.com", Version: "v1", Kind: "Plain"},
		{ProjectDir: proj, Chart: chartSrc, Group: "Bad_Group", Version: "v1", Kind: "Plain"},
		{ProjectDir: proj, Chart: chartSrc, Group: "apps.example.com", Version: "V1", Kind: "plain"},
	} {
		if _, err := CreateAPI(bad); err == nil {
			t.Errorf("%+v was taken", bad)
		}
	}
	if entries, _ := os.ReadDir(proj); len(entries) != 0 {
		t.Errorf("refused inputs left files: %v", entries)
	}
	mustCreate(t, o)
	// Another chart for the same kind is refused.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "Chart.yaml"), []byte("apiVersion: v2\nname: other\nversion: 1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateAPI(Options{ProjectDir: proj, Chart: other, Group: "apps.example.com", Version: "v1", Kind: "Plain"}); err == nil || !strings.Contains(err.Error(), "already backed by the chart charts/plain-chart") {
		t.Errorf("a second chart for one kind: %v", err)
	}
	// A rollback puts everything back: the app's folder goes, the
	// generated list of apps is restored.
	allApps := filepath.Join(proj, "internal", "apps", "all", "zz_generated.go")
	mustCreate(t, Options{ProjectDir: proj, Chart: chartSrc, Group: "apps.example.com", Version: "v1", Kind: "Plain", Hook: true})
	before, _ := os.ReadFile(filepath.Join(proj, "watches.yaml"))
	beforeAll, _ := os.ReadFile(allApps)
	res, err := CreateAPI(Options{ProjectDir: proj, Chart: other, Group: "apps.example.com", Version: "v1", Kind: "Other", Hook: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(res); !strings.HasSuffix(got, "created internal/apps/other/hook.go, updated internal/apps/all/zz_generated.go") {
		t.Errorf("another app: %s", got)
	}
	if err := res.Rollback(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(proj, "watches.yaml"))
	afterAll, _ := os.ReadFile(allApps)
	_, chartErr := os.Stat(filepath.Join(proj, "charts", "other"))
	_, hookErr := os.Stat(filepath.Join(proj, "internal", "apps", "other"))
	if string(after) != string(before) || string(afterAll) != string(beforeAll) || chartErr == nil || hookErr == nil {
		t.Errorf("rollback left changes: watches same=%v, apps list same=%v, chart err=%v, app folder err=%v",
			string(after) == string(before), string(afterAll) == string(beforeAll), chartErr, hookErr)
	}
	// A kind that cannot name an app folder is refused before anything is written.
	if _, err := CreateAPI(Options{ProjectDir: proj, Chart: other, Group: "apps.example.com", Version: "v1", Kind: "All", Hook: true}); err == nil || !strings.Contains(err.Error(), "cannot name an app folder") {
		t.Errorf("kind All with --hook: %v", err)
	}
}

// The hook stub and the regenerated list of apps compile with the real
// internal/apps packages (added with go build -overlay, the repository
// untouched).
func TestHookStubCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds internal/apps")
	}
	proj := t.TempDir()
	mustCreate(t, Options{ProjectDir: proj, Chart: chartSrc, Group: "apps.example.com", Version: "v1", Kind: "Plain", Hook: true})
	root := repoRoot(t)
	overlay := map[string]map[string]string{"Replace": {}}
	for _, rel := range []string{"internal/apps/plain/hook.go", "internal/apps/all/zz_generated.go"} {
		overlay["Replace"][filepath.Join(root, rel)] = filepath.Join(proj, rel)
	}
	b, _ := json.Marshal(overlay)
	of := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(of, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-overlay", of, "./internal/apps/all")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the stub does not build: %v\n%s", err, out)
	}
}

// The repository's list of apps is what create-api generates.
func TestAllAppsUpToDate(t *testing.T) {
	root := repoRoot(t)
	want, err := AllApps(root, defaultModule)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "internal", "apps", "all", "zz_generated.go"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("internal/apps/all/zz_generated.go is stale; want:\n%s", want)
	}
}

// repoRoot is two levels up from this package's directory, where go test
// runs its tests (not from this file's compiled path, which -trimpath
// removes).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func mustCreate(t *testing.T, o Options) *Result {
	t.Helper()
	r, err := CreateAPI(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Commit(); err != nil {
		t.Fatal(err)
	}
	return r
}

func actions(r *Result) string {
	var s []string
	for _, c := range r.Changes {
		s = append(s, c.Action+" "+filepath.ToSlash(c.Path))
	}
	return strings.Join(s, ", ")
}
