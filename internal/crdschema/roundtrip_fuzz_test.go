package crdschema_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/crdschema"
	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// FuzzSchemaRoundTrip feeds a chart's values.schema.json and a custom
// resource's spec (JSON) through what `make manifests` does: the schema
// converted (crdschema.FromChart) into a CRD (manifests.CRD, which runs
// the API server's CRD validation). Whatever FromChart converts of a
// schema Helm compiles, the CRD is made (the server would accept it). And every spec Helm's own schema
// validation (chartutil.ValidateAgainstSingleSchema) accepts is admitted
// by the CRD as the API server would on a create with strict field
// validation (crdschema.Admit: structural pruning drops no field, the
// schema refuses no value): the CRD is never stricter than the chart,
// formats aside: the CRD keeps the formats the API server checks
// (docs/packaging-schema.md), which Helm's validator only annotates, so
// they are taken out of the CRD before the sample is admitted.
// The chart's values.yaml is empty: the keys a schema leaves undeclared
// are typed from values.yaml by design (a documented narrowing), so the
// property is about what the schema says. Schemas that would make Helm
// load a document ($ref outside "#", an unknown $schema) are skipped.
// Seeds: every values.schema.json under charts/, test/corpus/,
// test/e2e/testdata/charts/ and testdata/, each with its values.yaml as
// the spec; the cases below; testdata/fuzz/FuzzSchemaRoundTrip.
func FuzzSchemaRoundTrip(f *testing.F) {
	for _, glob := range []string{"../../charts/*/", "../../test/corpus/*/", "../../test/e2e/testdata/charts/*/", "../../test/e2e/testdata/charts/*/charts/*/", "testdata/*/"} {
		dirs, _ := filepath.Glob(glob)
		for _, d := range dirs {
			schema, err := os.ReadFile(filepath.Join(d, "values.schema.json"))
			if err != nil {
				continue
			}
			values, _ := os.ReadFile(filepath.Join(d, "values.yaml"))
			spec, err := yaml.YAMLToJSON(values)
			if err != nil {
				continue
			}
			f.Add(schema, spec)
		}
	}
	for _, s := range []struct{ schema, spec string }{
		{`{"type":"object","properties":{"replicas":{"type":"integer","minimum":1}},"required":["replicas"]}`, `{"replicas":3}`},
		{`{"type":"object","properties":{"x":{"type":"number"}}}`, `{"x":1.5,"y":{"z":[1,"a"]}}`},
		{`{"type":"object","additionalProperties":false,"properties":{"a":{"type":["string","null"]}}}`, `{"a":null}`},
		{`{"type":"object","properties":{"a":{"enum":["x",1,null]},"b":{"const":{"k":[1]}}}}`, `{"a":1,"b":{"k":[1]}}`},
		{`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"integer"}]},"b":{"anyOf":[{"$ref":"#/$defs/n"}]}},"$defs":{"n":{"type":"number"}}}`, `{"a":"s","b":2}`},
		{`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}},"p":{"patternProperties":{"^x":{"type":"integer"}}}}}`, `{"m":{"k":"v"},"p":{"x1":1,"y":true}}`},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"n":{"type":"string","format":"email"}}},"uniqueItems":true}}}`, `{"l":[{"n":"a@b.c"},{"n":"not an email"}]}`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"i":{"type":"integer","exclusiveMaximum":10,"multipleOf":2}}}`, `{"i":8}`},
		{`{"type":"object","properties":{"s":{"type":"string","pattern":"^\\p{L}+$","maxLength":3}}}`, `{"s":"été"}`},
		{`{"type":"object","properties":{"d":{"type":"object","default":{"a":1},"properties":{"a":{"type":"integer"}}}},"if":{"required":["d"]},"then":{"required":["e"]}}`, `{"d":{"a":2},"e":{}}`},
		{`{"type":"object","properties":{"t":{"type":"integer"}}}`, `{"t":1.0}`},
		{`{"type":"object","properties":{"t":{"type":"string"},"u":{"not":{"type":"string"}}}}`, `{"u":[],"v":{}}`},
	} {
		f.Add([]byte(s.schema), []byte(s.spec))
	}
	f.Fuzz(func(t *testing.T, schema, specJSON []byte) {
		var spec map[string]any
		if len(schema) == 0 || !offline(schema) || utiljson.Unmarshal(specJSON, &spec) != nil || spec == nil {
			return
		}
		ch := &chart.Chart{
			Metadata: &chart.Metadata{APIVersion: "v2", Name: "fuzz", Version: "0.1.0"},
			Raw:      []*chart.File{{Name: "values.yaml", Data: []byte("{}\n")}},
			Schema:   schema,
		}
		if _, _, err := crdschema.FromChart(ch); err != nil {
			return
		}
		// A schema Helm cannot compile ({"type":"st@ing"}) makes a chart
		// that installs nothing: a CRD error (a clear one) is then fine.
		helmErr := chartutil.ValidateAgainstSingleSchema(spec, schema)
		compiles := helmErr == nil || errors.As(helmErr, &chartutil.JSONSchemaValidationError{})
		w := watches.Watch{Group: "test.example", Version: "v1", Kind: "Thing", Chart: ch}
		crd, _, err := manifests.CRD(w, nil, manifests.CRDOptions{})
		if err != nil && compiles {
			t.Fatalf("a schema Helm compiles makes no CRD: %v", err)
		}
		if err != nil || helmErr != nil {
			return
		}
		cr, _ := json.Marshal(map[string]any{"apiVersion": "test.example/v1", "kind": "Thing",
			"metadata": map[string]any{"name": "sample", "namespace": "default"}, "spec": spec})
		for i := range crd.Spec.Versions {
			withoutFormats(crd.Spec.Versions[i].Schema.OpenAPIV3Schema)
		}
		if err := crdschema.Admit(crd, cr); err != nil {
			t.Fatalf("the chart's schema accepts spec %s, the CRD refuses it: %v", specJSON, err)
		}
	})
}

// offline reports whether Helm can validate against schema without
// loading another document: every reference within it, every $schema a
// draft the validator knows.
func offline(schema []byte) bool {
	var doc any
	if json.Unmarshal(schema, &doc) != nil {
		return true // Helm refuses it without loading anything
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				s, isString := c.(string)
				switch {
				case (k == "$ref" || k == "$dynamicRef" || k == "$recursiveRef") && isString && !strings.HasPrefix(s, "#"):
					return false
				case k == "$schema" && isString && !knownDraft(s):
					return false
				case !walk(c):
					return false
				}
			}
		case []any:
			for _, c := range v {
				if !walk(c) {
					return false
				}
			}
		}
		return true
	}
	return walk(doc)
}

func knownDraft(s string) bool {
	s = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(s, "http://"), "https://"), "#")
	switch s {
	case "json-schema.org/draft-04/schema", "json-schema.org/draft-06/schema", "json-schema.org/draft-07/schema",
		"json-schema.org/draft/2019-09/schema", "json-schema.org/draft/2020-12/schema":
		return true
	}
	return false
}

// withoutFormats clears every format in a schema.
func withoutFormats(s *apiextv1.JSONSchemaProps) {
	if s == nil {
		return
	}
	s.Format = ""
	for _, m := range []map[string]apiextv1.JSONSchemaProps{s.Properties, s.PatternProperties, s.Definitions} {
		for k, c := range m {
			withoutFormats(&c)
			m[k] = c
		}
	}
	for _, l := range [][]apiextv1.JSONSchemaProps{s.AllOf, s.OneOf, s.AnyOf} {
		for i := range l {
			withoutFormats(&l[i])
		}
	}
	withoutFormats(s.Not)
	if s.Items != nil {
		withoutFormats(s.Items.Schema)
		for i := range s.Items.JSONSchemas {
			withoutFormats(&s.Items.JSONSchemas[i])
		}
	}
	if s.AdditionalProperties != nil {
		withoutFormats(s.AdditionalProperties.Schema)
	}
}
