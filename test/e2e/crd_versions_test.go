package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A chart's new schema that breaks existing custom resources is refused
// with the breaking changes listed by field path, and nothing changes; a
// compatible one passes; the breaking one goes in as a new version, the
// old one stays served, and one watch reconciles custom resources written
// in either version.
func TestCRDSchemaUpgrade(t *testing.T) {
	env := testenv.Cluster(t)
	ctx := context.Background()
	proj := t.TempDir()
	src := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "foreign", "memcached")
	createAPI := func(code int, chart, version string) string {
		return chartkeeper(t, code, "create-api", "--chart", chart, "--group", foreignGroup, "--version", version, "--kind", "Memcached", "--project-dir", proj)
	}
	createAPI(0, src, "v1alpha1")

	// Compatible: a new optional field.
	compatible := editChart(t, src, "1.3.0", func(props map[string]any) {
		props["verbosity"] = map[string]any{"type": "integer", "minimum": 0, "maximum": 3}
	})
	createAPI(0, compatible, "v1alpha1")

	// Breaking: a field removed, a bound tightened, a new required field.
	breaking := editChart(t, src, "2.0.0", func(props map[string]any) {
		delete(props, "extraArgs")
		props["memory"].(map[string]any)["maximum"] = 1024
	})
	before := treeDigest(t, proj)
	out := createAPI(1, breaking, "v1alpha1")
	for _, want := range []string{"spec.extraArgs: removed", "spec.memory: new maximum 1024", "version v1alpha1"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	if treeDigest(t, proj) != before {
		t.Errorf("a refused create-api changed the project")
	}

	// As a new version it goes in; v1alpha1 stays served, not stored.
	createAPI(0, breaking, "v1alpha2")
	b, err := os.ReadFile(filepath.Join(proj, "config", "crd", "bases", foreignGroup+"_memcacheds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(b, crd); err != nil {
		t.Fatal(err)
	}
	var versions []string
	for _, v := range crd.Spec.Versions {
		versions = append(versions, v.Name+map[bool]string{true: "(storage)", false: ""}[v.Storage])
		if v.Name == "v1alpha1" && v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["extraArgs"].Type != "array" {
			t.Errorf("v1alpha1 lost its schema")
		}
	}
	if strings.Join(versions, ",") != "v1alpha1,v1alpha2(storage)" {
		t.Fatalf("versions %v", versions)
	}

	kinds := applyCRDs(t, env, filepath.Join(proj, "config", "crd", "bases"))
	ns := env.Namespace(t)
	startOperator(t, env, filepath.Join(proj, "watches.yaml"))
	t.Cleanup(func() { deleteAll(t, env, ns, kinds) })
	old := schema.GroupVersionKind{Group: foreignGroup, Version: "v1alpha1", Kind: "Memcached"}
	if err := env.Client.Create(ctx, newCR(old, ns, "written-as-v1alpha1", map[string]any{"memory": 32, "extraArgs": []any{"-v"}})); err != nil {
		t.Fatalf("v1alpha1 is not served: %v", err)
	}
	if err := env.Client.Create(ctx, newCR(kinds[0], ns, "written-as-v1alpha2", map[string]any{"memory": 48})); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"written-as-v1alpha1", "written-as-v1alpha2"} {
		waitCRReady(t, env, kinds[0], ns, name)
	}
}

// editChart copies a chart with a new version and its schema's top-level
// properties edited (keys removed from them leave values.yaml too).
func editChart(t *testing.T, src, version string, edit func(props map[string]any)) string {
	t.Helper()
	ch, err := loader.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := yaml.Unmarshal(ch.Schema, &s); err != nil {
		t.Fatal(err)
	}
	props := s["properties"].(map[string]any)
	edit(props)
	var values map[string]any
	for _, f := range ch.Raw {
		if f.Name == "values.yaml" {
			if err := yaml.Unmarshal(f.Data, &values); err != nil {
				t.Fatal(err)
			}
			for k := range values {
				if _, ok := props[k]; !ok {
					delete(values, k) // a field removed from the schema goes from the defaults too
				}
			}
			f.Data = mustYAML(t, values)
		}
	}
	if ch.Schema, err = yaml.YAMLToJSON(mustYAML(t, s)); err != nil {
		t.Fatal(err)
	}
	for _, f := range ch.Raw {
		if f.Name == "values.schema.json" {
			f.Data = ch.Schema
		}
	}
	ch.Metadata.Version = version
	for _, f := range ch.Raw {
		if f.Name == "Chart.yaml" {
			f.Data = mustYAML(t, ch.Metadata)
		}
	}
	dir := t.TempDir()
	if err := chartutil.SaveDir(ch, dir); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, ch.Name())
}

func mustYAML(t *testing.T, v any) []byte {
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
