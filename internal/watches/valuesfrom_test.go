package watches

import (
	"reflect"
	"strings"
	"testing"
)

func TestValuesFromLoads(t *testing.T) {
	ws, err := Parse([]byte(`- version: v1
  kind: Exporter
  chart: chart
  valuesFrom:
    - kind: ConfigMap
      name: shared-defaults
      optional: true
    - kind: Secret
      name: "{{ .Name }}-db"
      valuesKey: password
      targetPath: config.datasource.password
    - kind: Secret
      name: "{{ .Namespace }}-extra"
      valuesKey: extra.yaml
`), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ws[0].ValuesSources("orders", "team", "team")
	if err != nil {
		t.Fatal(err)
	}
	want := []ValuesSource{
		{Object: SourceObject{Kind: SourceConfigMap, Namespace: "team", Name: "shared-defaults"}, ValuesKey: DefaultValuesKey, Optional: true},
		{Object: SourceObject{Kind: SourceSecret, Namespace: "team", Name: "orders-db"}, ValuesKey: "password", TargetPath: "config.datasource.password"},
		{Object: SourceObject{Kind: SourceSecret, Namespace: "team", Name: "team-extra"}, ValuesKey: "extra.yaml"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ValuesSources:\n got %+v\nwant %+v", got, want)
	}
	// A cluster-scoped resource has no namespace: its objects are in the
	// release namespace; its templates see its own (empty) namespace.
	clusterScoped := ws[0]
	clusterScoped.ValuesFrom = clusterScoped.ValuesFrom[:2]
	got, err = clusterScoped.ValuesSources("orders", "", "monitoring")
	if err != nil || got[1].Object != (SourceObject{Kind: SourceSecret, Namespace: "monitoring", Name: "orders-db"}) {
		t.Errorf("cluster-scoped resource: %+v, %v", got, err)
	}
	if _, err := ws[0].ValuesSources("orders", "", "monitoring"); err == nil || !strings.Contains(err.Error(), `"-extra"`) {
		t.Errorf("{{ .Namespace }} of a cluster-scoped resource: %v", err)
	}
	// A name the template makes invalid for one resource is an error for it.
	if _, err := ws[0].ValuesSources(strings.Repeat("x", 260), "team", "team"); err == nil || !strings.Contains(err.Error(), "valuesFrom[1]") {
		t.Errorf("a too long name: %v", err)
	}
	if got, err := (Watch{Kind: "Plain"}).ValuesSources("orders", "team", "team"); err != nil || got != nil {
		t.Errorf("no valuesFrom: %+v, %v", got, err)
	}
}

func TestValuesFromErrors(t *testing.T) {
	tests := []struct {
		name  string
		entry string
		want  []string
	}{
		{"kind missing", "{name: x}", []string{`field "valuesFrom[0].kind": must be set: "ConfigMap" or "Secret"`}},
		{"kind unknown", "{kind: Pod, name: x}", []string{`field "valuesFrom[0].kind": "Pod" is not a kind valuesFrom reads`}},
		{"kind in lower case", "{kind: secret, name: x}", []string{`"secret" is not a kind valuesFrom reads: use "ConfigMap" or "Secret"`}},
		{"name missing", "{kind: Secret}", []string{`field "valuesFrom[0].name": must be set`}},
		{"name does not parse", "{kind: Secret, name: '{{ .Name '}", []string{`field "valuesFrom[0].name"`, "unclosed action"}},
		{"name names an unknown field", "{kind: Secret, name: '{{ .Release }}-x'}", []string{`field "valuesFrom[0].name"`, "Release"}},
		{"name not an object name", "{kind: ConfigMap, name: Shared_Defaults}", []string{`field "valuesFrom[0].name"`, `"Shared_Defaults"`, "not a valid ConfigMap name"}},
		{"name a template makes invalid", "{kind: Secret, name: '{{ .Kind }}-values'}", []string{`field "valuesFrom[0].name"`, `"Foo-values" (from "{{ .Kind }}-values") is not a valid Secret name`}},
		{"valuesKey not a key", "{kind: Secret, name: x, valuesKey: 'a b'}", []string{`field "valuesFrom[0].valuesKey"`, `"a b" is not a key of a Secret's data`}},
		{"key is Flux's valuesKey", "{kind: Secret, name: x, key: values.yaml}", []string{`entry 0 (kind "Foo")`, `unknown field "key"`, "valuesKey"}},
		{"unknown field", "{kind: Secret, name: x, optinal: true}", []string{`entry 0 (kind "Foo")`, `unknown field "optinal"`}},
		{"targetPath with a value", "{kind: Secret, name: x, targetPath: 'a=b'}", []string{`field "valuesFrom[0].targetPath"`, `"a=b" is not a values path`}},
		{"targetPath with a list", "{kind: Secret, name: x, targetPath: 'a,b'}", []string{`field "valuesFrom[0].targetPath"`}},
		{"targetPath with a bad index", "{kind: Secret, name: x, targetPath: 'a[x]'}", []string{`field "valuesFrom[0].targetPath"`}},
		{"targetPath too long", "{kind: Secret, name: x, targetPath: " + strings.Repeat("a", 251) + "}", []string{`field "valuesFrom[0].targetPath"`, "at most 250"}},
		{"not a list", "x", []string{`entry 0 (kind "Foo")`, "valuesFrom"}},
		{"entry not a mapping", "x", []string{`entry 0 (kind "Foo"): valuesFrom: each entry must be a mapping`}},
		{"optional not a boolean", "{kind: Secret, name: x, optional: sometimes}", []string{`valuesFrom: field "optional": expected true or false, got a string`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yaml := "- version: v1\n  kind: Foo\n  chart: chart\n  valuesFrom: [" + tt.entry + "]\n"
			if tt.name == "not a list" {
				yaml = "- version: v1\n  kind: Foo\n  chart: chart\n  valuesFrom: x\n"
			}
			_, err := Parse([]byte(yaml), "testdata")
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestValuesFromValidPaths(t *testing.T) {
	for _, p := range []string{"password", "auth.password", "hosts[0]", "a.b[2].c", `annotations.example\.com/key`, "a-b_c"} {
		if _, err := Parse([]byte("- version: v1\n  kind: Foo\n  chart: chart\n  valuesFrom: [{kind: Secret, name: x, targetPath: '"+p+"'}]\n"), "testdata"); err != nil {
			t.Errorf("targetPath %q: %v", p, err)
		}
	}
}
