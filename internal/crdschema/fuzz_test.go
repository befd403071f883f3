package crdschema

import (
	"os"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
)

// FuzzFromChart feeds arbitrary values.schema.json and values.yaml
// documents to the conversion: it must never panic, and whatever it
// returns without an error is an object schema.
// Seeds: the test charts, the cases below and testdata/fuzz/FuzzFromChart.
func FuzzFromChart(f *testing.F) {
	for _, name := range []string{"schema-chart", "plain-chart"} {
		schema, _ := os.ReadFile(filepath.Join("testdata", name, "values.schema.json"))
		values, _ := os.ReadFile(filepath.Join("testdata", name, "values.yaml"))
		f.Add(schema, values)
	}
	f.Add([]byte(`{"allOf":[{"properties":5,"required":"x"}],"$ref":"#/a/~1/~0"}`), []byte("a: &x {b: *x}"))
	f.Add([]byte(`{"properties":{"a":{"$ref":"#"}},"type":["object","null"]}`), []byte("<<: [*a]"))
	f.Add([]byte(`{"allOf":[{"$ref":"#"}],"properties":{"b":{"allOf":[{"$ref":"#/properties/b"}]}}}`), []byte("b: 1"))
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"array","items":[true,false],"uniqueItems":true,"exclusiveMinimum":true}}}`), []byte("- 1\n- a"))
	f.Fuzz(func(t *testing.T, schema, values []byte) {
		ch := &chart.Chart{
			Metadata: &chart.Metadata{APIVersion: "v2", Name: "fuzz", Version: "0.1.0"},
			Raw:      []*chart.File{{Name: "values.yaml", Data: values}},
			Schema:   schema,
		}
		if len(schema) == 0 {
			ch.Schema = nil
		}
		spec, _, err := FromChart(ch)
		if err == nil && spec.Type != "object" {
			t.Fatalf("a spec schema of type %q", spec.Type)
		}
	})
}
