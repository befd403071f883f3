package crdschema_test

import (
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/crdschema"
)

// Admit reads a custom resource in YAML (block or flow style) or JSON, as
// the API server does, and refuses what the schema refuses.
func TestAdmitReadsYAMLAndJSON(t *testing.T) {
	yes := true
	crd := &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things.test.example"},
		Spec: apiextv1.CustomResourceDefinitionSpec{Group: "test.example", Versions: []apiextv1.CustomResourceDefinitionVersion{{
			Name: "v1", Served: true, Storage: true,
			Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
				Type: "object",
				Properties: map[string]apiextv1.JSONSchemaProps{
					"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"},
					"spec": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
						"a":     {Type: "string"},
						"extra": {Type: "object", XPreserveUnknownFields: &yes},
					}},
				},
			}},
		}}},
	}
	long := strings.Repeat("k", 2000) // over the YAML parser's 1,024 for a key
	for _, c := range []struct {
		name, manifest, wantErr string
	}{
		{"block YAML", "apiVersion: test.example/v1\nkind: Thing\nmetadata:\n  name: s\nspec:\n  a: x\n", ""},
		{"flow YAML", "{apiVersion: test.example/v1, kind: Thing, metadata: {name: s}, spec: {a: x}}", ""},
		{"JSON with a long key", `{"apiVersion":"test.example/v1","kind":"Thing","metadata":{"name":"s"},"spec":{"extra":{"` + long + `":1}}}`, ""},
		{"a refused value", `{"apiVersion":"test.example/v1","kind":"Thing","metadata":{"name":"s"},"spec":{"a":1}}`, "spec.a"},
		{"an unknown field", "apiVersion: test.example/v1\nkind: Thing\nmetadata:\n  name: s\nspec:\n  b: x\n", "unknown field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := crdschema.Admit(crd, []byte(c.manifest))
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error %v, want one naming %q", err, c.wantErr)
			}
		})
	}
}
