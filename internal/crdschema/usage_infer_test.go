package crdschema

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// inferredChart builds a chart without values.schema.json from a
// values.yaml and templates (name -> text).
func inferredChart(t *testing.T, name, values string, templates map[string]string) *chart.Chart {
	t.Helper()
	ch := &chart.Chart{
		Metadata: &chart.Metadata{Name: name, Version: "1.0.0", APIVersion: "v2"},
		Raw:      []*chart.File{{Name: chartutil.ValuesfileName, Data: []byte(values)}},
	}
	for n, text := range templates {
		ch.Templates = append(ch.Templates, &chart.File{Name: "templates/" + n, Data: []byte(text)})
	}
	v, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		t.Fatal(err)
	}
	ch.Values = v
	return ch
}

// A subtree the templates read only field by field (hasKey, index, with
// and its fields) is typed from values.yaml, and the keys they read that
// values.yaml lacks are kept, of any type; what they use whole keeps its
// unknown fields. A subchart's key and global are not taken for keys its
// parent reads; a library chart's helpers read the parent's values.
func TestInferTypesASubtreeReadByField(t *testing.T) {
	const values = `
commonLabels: {team: edge}
controller:
  replicaCount: 1
  image: {repository: example/ingress, tag: "1.0"}
  minAvailable: 1
  # maxUnavailable: 1
  resources: {requests: {cpu: 100m}}
  nodeSelector: {kubernetes.io/os: linux}
  config: {use-gzip: "true"}
`
	ch := inferredChart(t, "ic", values, map[string]string{
		"pdb.yaml": `{{- if and .Values.controller.minAvailable (not (hasKey .Values.controller "maxUnavailable")) }}
minAvailable: {{ .Values.controller.minAvailable }}
{{- else }}
maxUnavailable: {{ .Values.controller.maxUnavailable }}
{{- end }}`,
		"deploy.yaml": `replicas: {{ .Values.controller.replicaCount }}
image: {{ index .Values.controller "image" "repository" }}:{{ .Values.controller.image.tag }}
{{- with .Values.controller }}
resources: {{ toYaml .resources | nindent 2 }}
{{- with .nodeSelector }}
nodeSelector: {{ toYaml . | nindent 2 }}
{{- end }}
{{- end }}
{{- if .Values.global.imageRegistry }}x{{ end }}`,
		"cm.yaml": `{{ range $k, $v := .Values.controller.config }}{{ $k }}: {{ $v | quote }}{{ end }}`,
	})
	sub := inferredChart(t, "backend", "port: 8080\n", map[string]string{"svc.yaml": `{{ .Values.port }}{{ .Values.extraLabel }}`})
	lib := inferredChart(t, "common", "exampleValue: 1\n", map[string]string{"_labels.tpl": `{{ define "common.labels" }}{{ toYaml .Values.commonLabels }}{{ .Values.nameOverride }}{{ end }}`})
	lib.Metadata.Type = "library"
	ch.AddDependency(sub)
	ch.AddDependency(lib)
	ch.Metadata.Dependencies = []*chart.Dependency{{Name: "backend"}, {Name: "common"}}

	spec, _, err := FromChart(ch)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(testCRD(spec)); err != nil {
		t.Fatalf("the API server would refuse the schema: %v", err)
	}
	open := func(s apiextv1.JSONSchemaProps) bool {
		return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
	}
	c := spec.Properties["controller"]
	for _, x := range []struct {
		what string
		ok   bool
	}{
		{"the subtree read with hasKey is closed", !open(c) && c.Properties != nil},
		{"its scalars are typed", c.Properties["replicaCount"].Type == "integer"},
		{"a budget is an integer or a percentage, as Kubernetes takes it", c.Properties["minAvailable"].XIntOrString && c.Properties["minAvailable"].Type == ""},
		{"a map read by field (index, fields) is typed", !open(c.Properties["image"]) && c.Properties["image"].Properties["tag"].Type == "string"},
		{"the key hasKey looks for, not in values.yaml, takes any value", open(c.Properties["maxUnavailable"]) && c.Properties["maxUnavailable"].Type == ""},
		{"toYaml of a field under with keeps it whole", open(c.Properties["resources"])},
		{"toYaml . in a nested with keeps it whole", open(c.Properties["nodeSelector"])},
		{"a map ranged over keeps any key", open(c.Properties["config"])},
		{"a subchart's key is its schema, not a read key", spec.Properties["backend"].Properties["port"].Type == "integer"},
		{"a subchart's read key values.yaml lacks is kept", open(spec.Properties["backend"].Properties["extraLabel"])},
		{"a library chart's helpers read the parent's values", open(spec.Properties["commonLabels"]) && open(spec.Properties["nameOverride"])},
		{"and not the library's", len(spec.Properties["common"].Properties) == 1},
		{"global read by the templates is free-form", spec.Properties["global"].Type == "object" && open(spec.Properties["global"])},
	} {
		if !x.ok {
			t.Errorf("not so: %s", x.what)
		}
	}

	crd := testCRD(spec)
	cr := func(s string) []byte {
		return []byte("apiVersion: test.example/v1\nkind: Thing\nmetadata: {name: x}\nspec:\n" + s)
	}
	if err := Admit(crd, cr("  controller: {replicaCount: two}\n")); err == nil || !strings.Contains(err.Error(), "spec.controller.replicaCount") {
		t.Errorf("want replicaCount: two refused naming spec.controller.replicaCount, got %v", err)
	}
	ok := "  controller: {replicaCount: 2, minAvailable: 50%, maxUnavailable: 50%, resources: {limits: {memory: 1Gi}}, config: {any-key: x}}\n"
	if err := Admit(crd, cr(ok)); err != nil {
		t.Errorf("refused %s: %v", ok, err)
	}
}
