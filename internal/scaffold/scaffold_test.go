package scaffold

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
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
	if got := actions(first); got != "created charts/plain-chart, updated watches.yaml, created internal/apps/plain_hook.go" {
		t.Errorf("first run: %s", got)
	}
	b, _ := os.ReadFile(filepath.Join(proj, "watches.yaml"))
	want := existing + "- group: apps.example.com\n  version: v1alpha1\n  kind: Plain\n  chart: charts/plain-chart\n"
	if string(b) != want {
		t.Errorf("watches.yaml:\n%s", b)
	}
	second := mustCreate(t, o)
	if got := actions(second); got != "unchanged charts/plain-chart, unchanged watches.yaml, unchanged internal/apps/plain_hook.go" {
		t.Errorf("second run: %s", got)
	}
	// A new version moves the entry (comments kept), nothing else.
	o.Version = "v1beta1"
	third := mustCreate(t, o)
	if got := actions(third); got != "unchanged charts/plain-chart, updated watches.yaml, unchanged internal/apps/plain_hook.go" {
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
	// A rollback puts everything back.
	before, _ := os.ReadFile(filepath.Join(proj, "watches.yaml"))
	res, err := CreateAPI(Options{ProjectDir: proj, Chart: other, Group: "apps.example.com", Version: "v1", Kind: "Other", Hook: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Rollback(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(proj, "watches.yaml"))
	_, chartErr := os.Stat(filepath.Join(proj, "charts", "other"))
	_, hookErr := os.Stat(filepath.Join(proj, "internal", "apps", "other_hook.go"))
	if string(after) != string(before) || chartErr == nil || hookErr == nil {
		t.Errorf("rollback left changes: watches same=%v, chart err=%v, hook err=%v", string(after) == string(before), chartErr, hookErr)
	}
}

// The hook stub compiles into the real internal/apps package (added with
// go build -overlay, the repository untouched) and vets clean.
func TestHookStubCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds internal/apps")
	}
	proj := t.TempDir()
	mustCreate(t, Options{ProjectDir: proj, Chart: chartSrc, Group: "apps.example.com", Version: "v1", Kind: "Plain", Hook: true})
	_, file, _, _ := runtime.Caller(0)
	apps := filepath.Join(filepath.Dir(file), "..", "apps")
	overlay := map[string]map[string]string{"Replace": {filepath.Join(apps, "plain_hook.go"): filepath.Join(proj, "internal", "apps", "plain_hook.go")}}
	b, _ := json.Marshal(overlay)
	of := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(of, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "vet", "-overlay", of, ".")
	cmd.Dir = apps
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the stub does not build: %v\n%s", err, out)
	}
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
