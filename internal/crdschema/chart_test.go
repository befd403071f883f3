package crdschema

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestFromChartGolden converts a schema that uses most draft-07 keywords
// and infers one from a commented values.yaml: each must be a CRD schema
// the API server's own validation accepts, equal to its golden file, with
// the golden list of what only Helm checks.
func TestFromChartGolden(t *testing.T) {
	for _, name := range []string{"schema-chart", "plain-chart"} {
		t.Run(name, func(t *testing.T) {
			spec, warns := fromTestChart(t, name)
			if err := Validate(testCRD(spec)); err != nil {
				t.Fatalf("the API server would refuse the schema: %v", err)
			}
			got, err := yaml.Marshal(spec)
			if err != nil {
				t.Fatal(err)
			}
			var w strings.Builder
			for _, x := range warns {
				w.WriteString(x.String() + "\n")
			}
			golden(t, filepath.Join("testdata", name+".schema.golden.yaml"), got)
			golden(t, filepath.Join("testdata", name+".warnings.golden.txt"), []byte(w.String()))
		})
	}
}

// TestFromChartRules checks the rules that decide what the API server
// enforces, one by one, on the converted and the inferred schema.
func TestFromChartRules(t *testing.T) {
	load := func(name string) apiextv1.JSONSchemaProps {
		spec, _ := fromTestChart(t, name)
		return spec
	}
	s, p := load("schema-chart"), load("plain-chart")
	preserve := func(x apiextv1.JSONSchemaProps) bool {
		return x.XPreserveUnknownFields != nil && *x.XPreserveUnknownFields
	}
	for _, c := range []struct {
		what string
		ok   bool
	}{
		{"a required key with a chart default is not required (spec is merged over defaults)", !contains(s.Required, "name")},
		{"a required key without a default stays required", contains(s.Required, "store")},
		{"required inside a $ref'd definition is kept", contains(s.Properties["store"].Required, "bucket")},
		{"a $ref is inlined with the referrer's description", s.Properties["store"].Description == "Where data goes." && s.Properties["store"].Properties["bucket"].MinLength != nil},
		{"allOf merges properties and required", s.Properties["backup"].Properties["schedule"].Type == "string" && contains(s.Properties["backup"].Required, "schedule")},
		{"draft-07 exclusiveMaximum becomes maximum + exclusiveMaximum", *s.Properties["replicas"].Maximum == 10 && s.Properties["replicas"].ExclusiveMaximum},
		{"draft-07 exclusiveMinimum becomes minimum + exclusiveMinimum", *s.Properties["ratio"].Minimum == 0 && s.Properties["ratio"].ExclusiveMinimum},
		{"null in an enum makes the field nullable, the enum left to Helm (the API server would refuse null)", len(s.Properties["mode"].Enum) == 0 && s.Properties["mode"].Nullable},
		{"const becomes a one-value enum", len(s.Properties["level"].Enum) == 1},
		{"integer|string becomes int-or-string", s.Properties["port"].XIntOrString},
		{"string|null becomes a nullable string", s.Properties["tag"].Type == "string" && s.Properties["tag"].Nullable},
		{"uniqueItems of strings becomes a set", s.Properties["tags"].XListType != nil && *s.Properties["tags"].XListType == "set"},
		{"a map of strings is additionalProperties", s.Properties["labels"].AdditionalProperties.Schema.Type == "string"},
		{"an object without properties is free-form", preserve(s.Properties["annotations"])},
		{"an object the templates use whole keeps unknown fields", preserve(s.Properties["probe"])},
		{"additionalProperties: false closes an object", !preserve(s.Properties["closed"])},
		{"additionalProperties: true with properties keeps unknown fields", preserve(s.Properties["open"])},
		{"a recursive $ref stops at any value", preserve(*s.Properties["tree"].Properties["children"].Items.Schema)},
		{"an unsupported format is dropped", s.Properties["regex"].Format == "" && s.Properties["when"].Format == "date-time"},
		{"a pattern RE2 cannot run is dropped", s.Properties["lookahead"].Pattern == ""},
		{"required inside list items is kept", contains(s.Properties["items"].Items.Schema.Required, "id")},
		{"the root without additionalProperties: false takes other keys, as JSON Schema says", preserve(s)},
		{"list items without additionalProperties: false take other keys", preserve(*s.Properties["items"].Items.Schema)},

		{"inferred: ints are integers", p.Properties["replicaCount"].Type == "integer"},
		{"inferred: floats are numbers", p.Properties["cpuTarget"].Type == "number"},
		{"inferred: empty maps are free-form", preserve(p.Properties["podAnnotations"]) && preserve(p.Properties["resources"])},
		{"inferred: a map used only field by field is closed", !preserve(p.Properties["image"])},
		{"inferred: a map used whole is free-form", preserve(p.Properties["livenessProbe"]) && p.Properties["livenessProbe"].Properties == nil},
		{"inferred: maps in lists are free-form", p.Properties["ingress"].Properties["hosts"].Items.Schema.Type == "object" && preserve(*p.Properties["ingress"].Properties["hosts"].Items.Schema)},
		{"inferred: scalars in lists are typed", p.Properties["ports"].Items.Schema.Type == "integer"},
		{"inferred: mixed lists take any items", p.Properties["mixed"].Items.Schema.Type == "" && preserve(*p.Properties["mixed"].Items.Schema)},
		{"inferred: null defaults take any value", p.Properties["nothing"].Type == "" && preserve(p.Properties["nothing"])},
		{"inferred: helm-docs comments are descriptions", p.Properties["replicaCount"].Description == "Number of Pods."},
		{"inferred: Bitnami @param comments are descriptions", p.Properties["image"].Properties["tag"].Description == "Image tag (default: the chart's appVersion)"},
		{"inferred: line comments are descriptions", p.Properties["image"].Properties["pullPolicy"].Description == "Always, IfNotPresent or Never"},
		{"inferred: every key is nullable (null removes a default)", p.Properties["image"].Properties["tag"].Nullable},
		{"inferred: no defaults are copied (the chart's apply)", p.Properties["replicaCount"].Default == nil},
	} {
		if !c.ok {
			t.Errorf("not so: %s", c.what)
		}
	}
}

func fromTestChart(t *testing.T, name string) (apiextv1.JSONSchemaProps, []Warning) {
	t.Helper()
	ch, err := loader.Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	spec, warns, err := FromChart(ch)
	if err != nil {
		t.Fatal(err)
	}
	return spec, warns
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// testCRD wraps a spec schema in a CRD, as the API server sees it.
func testCRD(spec apiextv1.JSONSchemaProps) *apiextv1.CustomResourceDefinition {
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things.test.example"},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "test.example", Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Kind: "Thing", ListKind: "ThingList", Plural: "things", Singular: "thing"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"spec": spec},
				}}}},
		},
		Status: apiextv1.CustomResourceDefinitionStatus{StoredVersions: []string{"v1"}},
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
