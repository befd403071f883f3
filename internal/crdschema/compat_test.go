package crdschema

import (
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestBreaking lists, by field path, exactly the changes that can fail an
// existing custom resource, and nothing for compatible ones.
func TestBreaking(t *testing.T) {
	const base = `
type: object
properties:
  replicas: {type: integer, minimum: 0, maximum: 10}
  name: {type: string, maxLength: 20}
  mode: {type: string, enum: [fast, safe]}
  image:
    type: object
    properties:
      tag: {type: string}
  labels: {type: object, additionalProperties: {type: string}}
  extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
  list: {type: array, items: {type: object, properties: {id: {type: integer}}}}
`
	for _, tc := range []struct {
		name, new string
		want      []string
	}{
		{"unchanged", base, nil},
		{"compatible: new optional field, wider bounds, more enum values, integer to number", `
type: object
properties:
  replicas: {type: number, minimum: -1, description: now documented}
  name: {type: string, maxLength: 40}
  mode: {type: string, enum: [fast, safe, slow]}
  image: {type: object, properties: {tag: {type: string}, digest: {type: string}}, required: [digest2], x-kubernetes-preserve-unknown-fields: true}
  labels: {type: object, additionalProperties: {type: string}}
  extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
  list: {type: array, items: {type: object, properties: {id: {type: integer}}}}
  added: {type: string, default: x}
  addedRequiredWithDefault: {type: string, default: y}
required: [addedRequiredWithDefault]
`, []string{"spec.image.digest2: newly required, without a default"}},
		{"breaking", `
type: object
required: [token]
properties:
  replicas: {type: string}
  name: {type: string, maxLength: 10, pattern: "^[a-z]+$"}
  mode: {type: string, enum: [fast]}
  image: {type: object, properties: {}}
  labels: {type: object, additionalProperties: {type: integer}}
  extra: {type: object, properties: {a: {type: string}}}
  list: {type: array, items: {type: object, properties: {id: {type: string}}}}
  token: {type: string}
`, []string{
			"spec.extra: no longer keeps fields it does not list",
			"spec.extra.a: newly typed as string where any field was kept",
			"spec.image.tag: removed",
			"spec.labels.*: type changed from string to integer",
			"spec.list[*].id: type changed from integer to string",
			"spec.mode: no longer accepts \"safe\"",
			"spec.name: maxLength tightened from 20 to 10",
			"spec.name: pattern changed from \"\" to \"^[a-z]+$\"",
			"spec.replicas: type changed from integer to string",
			"spec.token: newly required, without a default",
		}},
		{"typed field under a formerly open object", strings.Replace(base,
			"extra: {type: object, x-kubernetes-preserve-unknown-fields: true}",
			"extra: {type: object, x-kubernetes-preserve-unknown-fields: true, properties: {level: {type: integer}, free: {x-kubernetes-preserve-unknown-fields: true}}}", 1),
			[]string{"spec.extra.level: newly typed as integer where any field was kept"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Breaking("spec", parse(t, base), parse(t, tc.new))
			var lines []string
			for _, c := range got {
				lines = append(lines, c.String())
			}
			if strings.Join(lines, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func parse(t *testing.T, s string) apiextv1.JSONSchemaProps {
	t.Helper()
	var out apiextv1.JSONSchemaProps
	if err := yaml.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
