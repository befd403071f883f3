package manifests

import (
	"strings"
	"testing"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"sigs.k8s.io/yaml"
)

// A chartTemplate renders back, through Go templates as Helm runs them,
// the object it was built from: literal "{{" in values (a CRD description
// quoting a template) stays literal, inline tokens become their values and
// block tokens their indented YAML.
func TestChartTemplateRendersBack(t *testing.T) {
	tests := []struct {
		name  string
		build func(c *chartTemplate) map[string]any
		data  map[string]any
		want  string
	}{
		{"literal braces", func(c *chartTemplate) map[string]any {
			return map[string]any{"description": "use {{ .Values.x }} and }} as text"}
		}, nil, "description: use {{ .Values.x }} and }} as text\n"},
		{"inline", func(c *chartTemplate) map[string]any {
			return map[string]any{"name": releaseToken + "-x", "replicas": c.Inline("{{ .replicas }}")}
		}, map[string]any{"Release": map[string]any{"Name": "r"}, "replicas": 3}, "name: r-x\nreplicas: 3\n"},
		{"block", func(c *chartTemplate) map[string]any {
			return map[string]any{"spec": map[string]any{"resources": c.Block("toYaml .res")}}
		}, map[string]any{"res": map[string]any{"cpu": "1"}}, "spec:\n  resources:\n    cpu: \"1\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChartTemplate()
			b, err := c.Render(tt.build(c), "")
			if err != nil {
				t.Fatal(err)
			}
			funcs := sprig.TxtFuncMap()
			funcs["toYaml"] = func(v any) string { b, _ := yaml.Marshal(v); return strings.TrimSuffix(string(b), "\n") }
			tpl, err := template.New("t").Funcs(funcs).Parse(string(b))
			if err != nil {
				t.Fatalf("%v\n%s", err, b)
			}
			var out strings.Builder
			if err := tpl.Execute(&out, tt.data); err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimPrefix(out.String(), header); got != tt.want {
				t.Errorf("rendered\n%s\nwant\n%s\n(template:\n%s)", got, tt.want, b)
			}
		})
	}
}
