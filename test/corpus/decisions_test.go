package corpus

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/cli"
	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

var update = flag.Bool("update", false, "rewrite testdata/<chart>.golden with what create-api decides now")

// What create-api decides for each chart of the corpus (the watch entry it
// writes: scope, storage, CRD policy; what it prints about them and about
// the RBAC it adds; the generated ClusterRole's rules; the release
// record's size class) is compared with testdata/<chart>.golden, so that
// a change of decision shows in review. Run with -update to rewrite them.
func TestCreateAPIDecisions(t *testing.T) {
	dirs, err := filepath.Glob("*/Chart.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no charts in the corpus: %v", err)
	}
	for _, f := range dirs {
		name := filepath.Dir(f)
		t.Run(name, func(t *testing.T) {
			got := decisions(t, name)
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if os.IsNotExist(err) {
				t.Fatalf("no golden file %s; run with -update (go test ./test/corpus -run TestCreateAPIDecisions -update) and review it", golden)
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(want) != got {
				t.Errorf("create-api decides differently for %s than %s says (if the change is meant, run with -update and review the diff):\n--- got:\n%s\n--- want:\n%s", name, golden, got, want)
			}
		})
	}
}

// decisions packages the corpus chart name with create-api into a new
// project and summarises what it decided.
func decisions(t *testing.T, name string) string {
	t.Helper()
	chart, err := filepath.Abs(name)
	if err != nil {
		t.Fatal(err)
	}
	proj := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := cli.Main([]string{"create-api", "--chart", chart, "--group", group, "--version", "v1alpha1", "--kind", kindOf(name), "--project-dir", proj}, &stdout, &stderr); code != 0 {
		t.Fatalf("create-api: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	ws, err := watches.Load(filepath.Join(proj, "watches.yaml"))
	if err != nil || len(ws) != 1 {
		t.Fatalf("watches.yaml: %v (%d entries)", err, len(ws))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# What create-api decides for test/corpus/%s (kind %s).\n", name, kindOf(name))
	b.WriteString("# Regenerate: go test ./test/corpus -run TestCreateAPIDecisions -update\n\n")
	b.WriteString("watch entry, besides group, version, kind and chart:\n")
	raw, err := os.ReadFile(filepath.Join(proj, "watches.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var entries []map[string]any
	if err := yaml.Unmarshal(raw, &entries); err != nil || len(entries) != 1 {
		t.Fatalf("watches.yaml: %v (%d entries)", err, len(entries))
	}
	for _, k := range []string{"group", "version", "kind", "chart"} {
		delete(entries[0], k)
	}
	if len(entries[0]) == 0 {
		b.WriteString("  (nothing: every default)\n")
	} else {
		y, err := yaml.Marshal(entries[0])
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(indent(strings.TrimSpace(string(y))))
	}
	renders, err := manifests.Render(ws[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	choice, err := manifests.ChooseStorage(renders)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "\nrelease storage: %s (record with the defaults: %s)\n", ws[0].ReleaseStorage(), sizeClass(choice.Size))
	b.WriteString("\ncreate-api printed (files written left out):\n")
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if f := strings.Fields(l); len(f) == 2 && (f[0] == "created" || f[0] == "updated" || f[0] == "unchanged") {
			continue
		}
		b.WriteString(indent(l))
	}
	if s := strings.TrimSpace(stderr.String()); s != "" {
		b.WriteString(indent(s))
	}
	b.WriteString("\ngenerated ClusterRole (config/rbac/role.yaml):\n")
	rb, err := os.ReadFile(filepath.Join(proj, "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(rb, &role); err != nil {
		t.Fatal(err)
	}
	for _, r := range role.Rules {
		b.WriteString(indent(ruleLine(r)))
	}
	return strings.ReplaceAll(b.String(), proj, "$PROJECT")
}

// kindOf names the kind of a corpus chart: gizmo-controller -> GizmoController.
func kindOf(name string) string {
	var b strings.Builder
	for _, p := range strings.Split(name, "-") {
		if p != "" {
			b.WriteString(strings.ToUpper(p[:1]) + p[1:])
		}
	}
	return b.String()
}

// sizeClass rounds a record size up to a multiple of 64 KiB, so that the
// golden files do not change with the compressor's last bytes.
func sizeClass(n int) string {
	const step = 64 << 10
	return "at most " + manifests.Size((n/step+1)*step)
}

func ruleLine(r rbacv1.PolicyRule) string {
	var parts []string
	if len(r.NonResourceURLs) > 0 {
		parts = append(parts, "nonResourceURLs "+strings.Join(r.NonResourceURLs, ","))
	} else {
		group := strings.Join(r.APIGroups, ",")
		if group == "" {
			group = `""`
		}
		parts = append(parts, group+": "+strings.Join(r.Resources, ","))
	}
	if len(r.ResourceNames) > 0 {
		parts = append(parts, "names "+strings.Join(r.ResourceNames, ","))
	}
	return strings.Join(parts, " ") + " [" + strings.Join(r.Verbs, " ") + "]"
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}
