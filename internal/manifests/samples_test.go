package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

func TestPlaceholders(t *testing.T) {
	var s apiextv1.JSONSchemaProps
	if err := yaml.Unmarshal([]byte(`
type: object
required: [name, size, mode, store, tags, enabled]
properties:
  name: {type: string}
  size: {type: integer, minimum: 3}
  mode: {type: string, enum: [fast, safe]}
  store: {type: object, required: [bucket], properties: {bucket: {type: string, default: backups}}}
  tags: {type: array, items: {type: string}}
  enabled: {type: boolean}
  optional: {type: string}
`), &s); err != nil {
		t.Fatal(err)
	}
	got, _ := yaml.Marshal(placeholders(s))
	want := "enabled: false\nmode: fast\nname: \"\"\nsize: 3\nstore:\n  bucket: backups\ntags: []\n"
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestAddResources(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, in, want string }{
		{"appended, comments kept", "# samples\nresources:\n  - a.yaml # first\n", "# samples\nresources:\n  - a.yaml # first\n  - b.yaml\n"},
		{"unindented list", "resources:\n- a.yaml\n", "resources:\n- a.yaml\n- b.yaml\n"},
		{"already listed", "resources:\n  - b.yaml\n", "resources:\n  - b.yaml\n"},
		{"resources not last", "resources:\n- a.yaml\nnamespace: x\n", "namespace: x\nresources:\n- a.yaml\n- b.yaml\n"},
	} {
		p := filepath.Join(dir, "kustomization.yaml")
		if err := os.WriteFile(p, []byte(tc.in), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := addResources(p, []string{"b.yaml"})
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %q (%v), want %q", tc.name, got, err, tc.want)
		}
	}
	got, err := addResources(filepath.Join(dir, "missing.yaml"), []string{"b.yaml"})
	if err != nil || !strings.HasSuffix(string(got), "resources:\n  - b.yaml\n") {
		t.Errorf("new kustomization: %q %v", got, err)
	}
}

// A chart with no values.yaml but required keys gets a sample of
// placeholders only.
func TestSampleWithoutValues(t *testing.T) {
	w := watches.Watch{Group: "apps.example.com", Version: "v1", Kind: "Thing",
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "thing", Version: "1.0.0"}}}
	var spec apiextv1.JSONSchemaProps
	if err := yaml.Unmarshal([]byte("type: object\nrequired: [name]\nproperties: {name: {type: string}}\n"), &spec); err != nil {
		t.Fatal(err)
	}
	b, err := Sample(w, spec)
	if err != nil {
		t.Fatal(err)
	}
	var u struct{ Spec map[string]any }
	if err := yaml.Unmarshal(b, &u); err != nil || u.Spec["name"] != "" || len(u.Spec) != 1 {
		t.Errorf("sample:\n%s (%v)", b, err)
	}
	b, err = Sample(w, apiextv1.JSONSchemaProps{Type: "object"})
	if err != nil || !strings.HasSuffix(string(b), "spec: {}\n") {
		t.Errorf("sample without values:\n%s (%v)", b, err)
	}
}
