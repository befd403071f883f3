package crdschema

import (
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Keys a partial values.schema.json leaves undeclared are typed from
// values.yaml (anchors and merge keys followed) where the schema allows
// them, and left untyped where the templates use the object whole.
func TestUndeclaredKeysTypedFromValues(t *testing.T) {
	const schema = `{"type": "object", "properties": {
		"db": {"type": "object", "properties": {"port": {"type": "integer"}}},
		"closed": {"type": "object", "additionalProperties": false, "properties": {"a": {"type": "string"}}},
		"probe": {"type": "object", "properties": {"path": {"type": "string"}}}}}`
	const values = `
base: &base
  timeout: 30s
db:
  port: 5432
  <<: *base
  # Connection pool size.
  pool: 10
  tls: {enabled: false}
closed:
  a: x
probe:
  path: /healthz
  periodSeconds: 10
extra: [1, 2]
`
	ch := &chart.Chart{
		Metadata:  &chart.Metadata{Name: "t", Version: "1.0.0", APIVersion: "v2"},
		Schema:    []byte(schema),
		Raw:       []*chart.File{{Name: chartutil.ValuesfileName, Data: []byte(values)}},
		Templates: []*chart.File{{Name: "templates/p.yaml", Data: []byte(`probe: {{ toYaml .Values.probe }}`)}},
	}
	v, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		t.Fatal(err)
	}
	ch.Values = v
	spec, _, err := FromChart(ch)
	if err != nil {
		t.Fatal(err)
	}
	prop := func(path ...string) apiextv1.JSONSchemaProps {
		s := spec
		for _, p := range path {
			s = s.Properties[p]
		}
		return s
	}
	open := func(s apiextv1.JSONSchemaProps) bool {
		return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
	}
	for _, c := range []struct {
		what string
		ok   bool
	}{
		{"a declared key stays as declared", prop("db", "port").Type == "integer"},
		{"an undeclared scalar is typed from values.yaml", prop("db", "pool").Type == "integer"},
		{"its comment is its description", prop("db", "pool").Description == "Connection pool size."},
		{"a merged key is typed", prop("db", "timeout").Type == "string"},
		{"an undeclared map is typed and keeps other keys", prop("db", "tls", "enabled").Type == "boolean" && open(prop("db", "tls"))},
		{"an open object keeps other keys", open(prop("db")) && open(spec)},
		{"an undeclared list is typed", prop("extra").Type == "array" && prop("extra").Items.Schema.Type == "integer"},
		{"additionalProperties: false stays closed", !open(prop("closed")) && len(prop("closed").Properties) == 1},
		{"an object the templates use whole gets no typed undeclared keys", open(prop("probe")) && len(prop("probe").Properties) == 1},
	} {
		if !c.ok {
			t.Errorf("not so: %s", c.what)
		}
	}
}

// A key that only anyOf/oneOf alternatives declare is not typed from
// values.yaml: the alternatives may allow other types than its default's
// (a backup target given as a URL string or as an object, say), and the
// CRD must not be stricter than the chart's schema. It takes any value,
// Helm checks the alternatives, and the key is reported.
func TestKeysOfAlternativesAreNotTypedFromValues(t *testing.T) {
	const schema = `{"type": "object", "$defs": {"bucket": {"properties": {"target": {"type": "object"}}}},
		"properties": {"backup": {"type": "object",
			"properties": {"enabled": {"type": "boolean"}},
			"anyOf": [{"properties": {"target": {"type": "string"}}}, {"$ref": "#/$defs/bucket"}]}}}`
	const values = `
backup:
  enabled: false
  target: s3://backups
  schedule: "@daily"
`
	ch := &chart.Chart{
		Metadata: &chart.Metadata{Name: "t", Version: "1.0.0", APIVersion: "v2"},
		Schema:   []byte(schema),
		Raw:      []*chart.File{{Name: chartutil.ValuesfileName, Data: []byte(values)}},
	}
	v, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		t.Fatal(err)
	}
	ch.Values = v
	spec, warns, err := FromChart(ch)
	if err != nil {
		t.Fatal(err)
	}
	backup := spec.Properties["backup"]
	target := backup.Properties["target"]
	if target.Type != "" || target.XPreserveUnknownFields == nil || !*target.XPreserveUnknownFields {
		t.Errorf("backup.target is typed %q (preserve %v): the alternatives allow a string or an object", target.Type, target.XPreserveUnknownFields)
	}
	if backup.Properties["schedule"].Type != "string" {
		t.Errorf("backup.schedule, which no alternative names, is not typed from values.yaml: %+v", backup.Properties["schedule"])
	}
	if backup.Properties["enabled"].Type != "boolean" {
		t.Errorf("backup.enabled lost its declared type")
	}
	found := false
	for _, w := range warns {
		found = found || (w.Path == "spec.backup.target" || w.Path == "backup.target")
	}
	if !found {
		t.Errorf("backup.target is not reported: %v", warns)
	}
}
