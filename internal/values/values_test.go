package values

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/ownership"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestComputeSetsOverridesOnSpec(t *testing.T) {
	spec := chartutil.Values{"image": map[string]any{"repository": "nginx", "tag": "1.0"}, "replicas": int64(2)}
	got, err := Compute(spec, map[string]string{"image.tag": "1.27", "extra.list[0]": "a", "replicas": "5"})
	if err != nil {
		t.Fatal(err)
	}
	img := got["image"].(map[string]any)
	if img["repository"] != "nginx" || img["tag"] != "1.27" || got["replicas"] != int64(5) {
		t.Errorf("got %v", got)
	}
	if spec["image"].(map[string]any)["tag"] != "1.0" {
		t.Error("Compute modified its input")
	}
	if _, err := Compute(spec, map[string]string{"a[": "x"}); err == nil {
		t.Error("a malformed override key is not an error")
	}
}

// Overrides are typed as helm-operator-plugins (and Helm's --set) type
// them, or kept strings as operator-sdk's Helm operator (and --set-string)
// keeps them.
func TestComputeAsTypesOrStrings(t *testing.T) {
	overrides := map[string]string{"replicas": "2", "enabled": "false", "tag": "1.0", "empty": "", "nothing": "null",
		"hosts[0]": "a.example", "image.tag": "2.0"}
	spec := func() chartutil.Values {
		return chartutil.Values{"replicas": int64(5), "hosts": []any{"x.example", "y.example"},
			"image": map[string]any{"repository": "nginx", "tag": "1.0"}}
	}
	image := map[string]any{"repository": "nginx", "tag": "2.0"}
	tests := []struct {
		asStrings bool
		want      chartutil.Values
	}{
		// helm-operator-plugins: --set into the spec, typed; an index sets one element.
		{false, chartutil.Values{"replicas": int64(2), "enabled": false, "tag": "1.0", "empty": "", "nothing": nil,
			"hosts": []any{"a.example", "y.example"}, "image": image}},
		// operator-sdk: --set-string on their own, merged over the spec; a list is replaced.
		{true, chartutil.Values{"replicas": "2", "enabled": "false", "tag": "1.0", "empty": "", "nothing": "null",
			"hosts": []any{"a.example"}, "image": image}},
	}
	for _, tc := range tests {
		got, err := ComputeAs(spec(), overrides, tc.asStrings)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("asStrings %v: got %#v, want %#v", tc.asStrings, got, tc.want)
		}
	}
}

func TestFromSpec(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if v, err := FromSpec(u); err != nil || len(v) != 0 {
		t.Errorf("no spec: %v %v", v, err)
	}
	u.Object["spec"] = "text"
	if _, err := FromSpec(u); err == nil {
		t.Error("a non-object spec is not an error")
	}
}

func TestDigestIsStableAndSensitive(t *testing.T) {
	ch, err := loader.Load("../../charts/webapp")
	if err != nil {
		t.Fatal(err)
	}
	cd := ChartDigest(ch)
	if cd != ChartDigest(ch) {
		t.Fatal("chart digest not deterministic")
	}
	a, _ := Digest(cd, chartutil.Values{"a": 1, "b": map[string]any{"c": "d", "e": []any{1, 2}}})
	b, _ := Digest(cd, chartutil.Values{"b": map[string]any{"e": []any{1, 2}, "c": "d"}, "a": 1})
	if a != b || len(a) != DigestLength {
		t.Errorf("map order changed the digest or length wrong: %s %s", a, b)
	}
	c, _ := Digest(cd, chartutil.Values{"a": 2, "b": map[string]any{"c": "d", "e": []any{1, 2}}})
	if c == a {
		t.Error("a value change did not change the digest")
	}
	ch.Templates[0].Data = append([]byte("# changed\n"), ch.Templates[0].Data...)
	d, _ := Digest(ChartDigest(ch), chartutil.Values{"a": 1, "b": map[string]any{"c": "d", "e": []any{1, 2}}})
	if d == a {
		t.Error("a template change did not change the digest")
	}
}

// Golden: the WebApp sample CR -> values -> rendered, owner-marked manifest.
func TestGoldenWebAppSample(t *testing.T) {
	raw, err := os.ReadFile("../../config/samples/apps_v1alpha1_webapp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	cr := &unstructured.Unstructured{Object: obj}
	cr.SetNamespace("default")
	cr.SetUID("00000000-0000-0000-0000-000000000001")
	spec, err := FromSpec(cr)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := Compute(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load("../../charts/webapp")
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(ch, vals); err != nil {
		t.Fatalf("the sample does not pass the chart's schema: %v", err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: cr.GetName(), Namespace: "default", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(files))
	for n := range files {
		if strings.HasSuffix(n, ".yaml") && strings.TrimSpace(files[n]) != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var manifest bytes.Buffer
	for _, n := range names {
		manifest.WriteString("---\n" + files[n] + "\n")
	}
	owner := ownership.Owner{GVK: schema.GroupVersionKind{Group: "apps.chartkeeper.dev", Version: "v1alpha1", Kind: "WebApp"},
		Namespace: "default", Name: cr.GetName(), UID: cr.GetUID()}
	marked, err := ownership.PostRenderer{Owner: owner, ReleaseNamespace: "default"}.Run(&manifest)
	if err != nil {
		t.Fatal(err)
	}
	valsYAML, _ := yaml.Marshal(vals)
	golden(t, "webapp-sample.values.yaml", valsYAML)
	golden(t, "webapp-sample.manifest.yaml", marked.Bytes())
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/values -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./internal/values -update after checking):\n%s", name, got)
	}
}

// Values from Go hooks may hold Go types JSON never produces.
func TestComputeNormalisesGoTypes(t *testing.T) {
	type s3 struct {
		Bucket string `json:"bucket"`
	}
	in := map[string]any{"replicas": 3, "members": []int{0, 1}, "ratio": float32(0.5), "names": []string{"a"},
		"labels": map[string]string{"k": "v"}, "store": s3{Bucket: "b"}}
	out, err := Compute(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"replicas": int64(3), "members": []any{int64(0), int64(1)}, "ratio": float64(0.5), "names": []any{"a"},
		"labels": map[string]any{"k": "v"}, "store": map[string]any{"bucket": "b"}}
	if !reflect.DeepEqual(map[string]any(out), want) {
		t.Fatalf("got %#v\nwant %#v", out, want)
	}
}
