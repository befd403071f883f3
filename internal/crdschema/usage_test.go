package crdschema

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
)

// usageOf scans one template as the only one of a chart.
func usageOf(t *testing.T, tmpl string) usage {
	t.Helper()
	ch := &chart.Chart{Metadata: &chart.Metadata{Name: "c", APIVersion: "v2", Version: "0.1.0"},
		Templates: []*chart.File{{Name: "templates/t.yaml", Data: []byte(tmpl)}}}
	return templateUsage(ch)
}

// split lists the paths used whole and those only read, sorted, each
// joined with spaces ("" for the values root shows as ".").
func (u usage) split() (whole, read string) {
	var w, r []string
	for p, isWhole := range u.paths {
		if p == "" {
			p = "."
		}
		if isWhole {
			w = append(w, p)
		} else {
			r = append(r, p)
		}
	}
	sort.Strings(w)
	sort.Strings(r)
	return strings.Join(w, " "), strings.Join(r, " ")
}

// One row per template idiom: the values paths it uses whole (which keep
// their unknown fields in the CRD) and those it only reads (typed from
// values.yaml; a read key values.yaml lacks takes any value).
func TestTemplateUsageIdioms(t *testing.T) {
	for _, c := range []struct {
		idiom, tmpl string
		whole, read string
	}{
		{"field access reads the leaf", `{{ .Values.controller.image.tag }}`,
			"controller.image.tag", ""},
		{"hasKey reads one key of the map, not the map whole",
			`{{ if hasKey .Values.controller "maxUnavailable" }}x{{ end }}`,
			"", "controller controller.maxUnavailable"},
		{"the PDB idiom: hasKey, then the keys one by one",
			`{{- if and .Values.controller.minAvailable (not (hasKey .Values.controller "maxUnavailable")) }}
minAvailable: {{ .Values.controller.minAvailable }}
{{- else if .Values.controller.maxUnavailable }}
maxUnavailable: {{ .Values.controller.maxUnavailable }}
{{- end }}`,
			"controller.maxUnavailable controller.minAvailable", "controller"},
		{"index with constant keys reads down", `{{ index .Values.controller "image" "tag" }}`,
			"controller.image.tag", "controller"},
		{"index .Values with constant keys", `{{ if index .Values "controller" "enabled" }}x{{ end }}`,
			"", ". controller.enabled"},
		{"index with a variable key uses the map whole", `{{ $k := "a" }}{{ index .Values.labels $k }}`,
			"labels", ""},
		{"index with a number uses the list whole", `{{ index .Values.hosts 0 }}`,
			"hosts", ""},
		{"get with a constant key", `{{ get .Values.x "k" }}`, "x.k", "x"},
		{"dig reads down to its keys, and its default", `{{ dig "a" "b" "none" .Values.x }}`, "x.a.b", "x"},
		{"default passes the value on", `{{ .Values.x.tag | default "latest" }}`, "x.tag", ""},
		{"default of a map printed is a use whole", `{{ default (dict) .Values.x.labels | toYaml }}`, "x.labels", ""},
		{"required passes the value on", `{{ required "set it" .Values.x.host }}`, "x.host", ""},
		{"if tests the value only", `{{ if .Values.metrics }}on{{ end }}`, "", "metrics"},
		{"not and empty test only", `{{ if or (not .Values.a) (empty .Values.b) }}x{{ end }}`, "", "a b"},
		{"toYaml uses the subtree whole", `{{ toYaml .Values.controller.resources | nindent 12 }}`,
			"controller.resources", ""},
		{"toJson and tpl too", `{{ toJson .Values.a }}{{ tpl .Values.b . }}`, "a b", ""},
		{"with makes the body's dot the subtree: fields are reads",
			`{{ with .Values.controller }}{{ .replicaCount }}{{ .image.tag }}{{ end }}`,
			"controller.image.tag controller.replicaCount", "controller"},
		{"toYaml . inside with uses the subtree whole",
			`{{ with .Values.controller.nodeSelector }}nodeSelector: {{ toYaml . }}{{ end }}`,
			"controller.nodeSelector", ""},
		{"with over a field, else keeps the outer dot",
			`{{ with .Values.x }}{{ .a }}{{ else }}{{ .Values.y }}{{ end }}`, "x.a y", "x"},
		{"$ inside with is the context", `{{ with .Values.x }}{{ $.Values.y.z }}{{ end }}`, "y.z", "x"},
		{"range uses the subtree whole (every key or element is taken)",
			`{{ range $k, $v := .Values.controller.config }}{{ $k }}={{ $v }}{{ end }}`,
			"controller.config", ""},
		{"range over a list", `{{ range .Values.hosts }}{{ .host }}{{ end }}`, "hosts", ""},
		{"include given a subtree: the callee may do anything",
			`{{ include "x.img" .Values.controller.image }}`, "controller.image", ""},
		{"include given the context: the helper is scanned itself",
			`{{ define "x.name" }}{{ .Values.nameOverride }}{{ end }}{{ include "x.name" . }}`,
			"nameOverride", ""},
		{"template given a subtree", `{{ template "x.img" .Values.image }}`, "image", ""},
		{"a dict handed to a helper uses its subtrees whole",
			`{{ include "render" (dict "value" .Values.labels "context" $) }}`, "labels", ""},
		{"a helper given a dict with the context reads .ctx.Values",
			`{{ define "h" }}{{ .ctx.Values.a.b }}{{ end }}`, "a.b", ""},
		{"a variable read field by field", `{{ $c := .Values.controller }}{{ $c.replicaCount }}{{ if hasKey $c "x" }}{{ end }}`,
			"controller.replicaCount", "controller controller.x"},
		{"a variable used whole", `{{ $c := .Values.controller }}{{ toYaml $c }}`, "controller", ""},
		{"a variable assigned in a branch keeps both values",
			`{{ $c := .Values.a }}{{ if .Values.b }}{{ $c = .Values.c }}{{ end }}{{ toYaml $c }}`, "a c", "b"},
		{".Values whole", `{{ toYaml .Values }}`, ".", ""},
		{".Subcharts.name.Values: the subchart's values", `{{ toYaml .Subcharts.cache.Values.resources }}`, "cache.resources", ""},
		{"$.Values.x as in a range body", `{{ range .Values.l }}{{ $.Values.x.y }}{{ end }}`, "l x.y", ""},
		{"a method's arguments", `{{ .Files.Get .Values.path }}`, "path", ""},
		{"a parenthesised pipeline then a field", `{{ (index .Values "a").b }}`, "a.b", ". a"},
		{"a key with a dot cannot be a path: the map whole",
			`{{ index .Values.podAnnotations "example.com/x" }}`, "podAnnotations", ""},
		{"printf and quote use what they print", `{{ printf "%s:%s" .Values.image.repository .Values.image.tag | quote }}`,
			"image.repository image.tag", ""},
		{"a template Go cannot parse: every reference is used whole (the old scan)",
			`{{ if hasKey .Values.controller "x" }}{{ .Values.a.b }}`, "a.b controller", ""},
	} {
		t.Run(c.idiom, func(t *testing.T) {
			whole, read := usageOf(t, c.tmpl).split()
			if whole != c.whole || read != c.read {
				t.Errorf("%s\nwhole: %q, want %q\nread:  %q, want %q", c.tmpl, whole, c.whole, read, c.read)
			}
		})
	}
}

// Ranges nested deep, each assigning a variable, would be walked 2^depth
// times: past a budget the template is taken by the old scan (every
// reference whole), in bounded time.
func TestTemplateUsageBudget(t *testing.T) {
	tmpl := `{{ $v := .Values.a }}` + strings.Repeat(`{{ range .Values.l }}{{ $v = .Values.b.c }}`, 40) +
		strings.Repeat(`{{ end }}`, 40)
	if whole, _ := usageOf(t, tmpl).split(); whole != "a b.c l" {
		t.Errorf("whole: %q, want the old scan's %q", whole, "a b.c l")
	}
}

// open is true at a path used whole and below it; children lists the
// keys read under a path, not a subchart's.
func TestUsageOpenAndChildren(t *testing.T) {
	u := usageOf(t, `{{ toYaml .Values.a.b }}{{ if .Values.a.c.d }}{{ end }}{{ if hasKey .Values.a "e" }}{{ end }}{{ .Values.top }}`)
	for path, want := range map[string]bool{"": false, "a": false, "a.b": true, "a.b.x": true, "a.c": false, "a.c.d": false} {
		if got := u.open(path); got != want {
			t.Errorf("open(%q) = %v, want %v", path, got, want)
		}
	}
	if got := u.children("a"); !slices.Equal(got, []string{"b", "c", "e"}) {
		t.Errorf("children(a) = %v", got)
	}
	if got := u.children(""); !slices.Equal(got, []string{"a", "top"}) {
		t.Errorf("children() = %v", got)
	}
}

// Any template text is scanned without a panic, the same way twice (a
// chart's templates are the user's, create-api must not crash on them).
func FuzzTemplateUsage(f *testing.F) {
	for _, s := range []string{
		`{{ if hasKey .Values.controller "maxUnavailable" }}{{ .Values.controller.maxUnavailable }}{{ end }}`,
		`{{ with .Values.x }}{{ toYaml . }}{{ else with .Values.y }}{{ .z }}{{ end }}`,
		`{{ range $i, $e := .Values.l }}{{ $e.a }}{{ $.Values.b }}{{ break }}{{ end }}`,
		`{{ $v := .Values.a }}{{ range .Values.l }}{{ $v = . }}{{ end }}{{ toYaml $v }}`,
		`{{ define "h" }}{{ (index .ctx.Values "a" "b").c | default (dig "x" "y" "" .Values.m) }}{{ end }}{{ template "h" (dict "ctx" $) }}`,
		`{{ block "b" .Values.x }}{{ .y }}{{ end }}{{ .Subcharts.s.Values.t }}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tmpl string) {
		w1, r1 := usageOf(t, tmpl).split()
		w2, r2 := usageOf(t, tmpl).split()
		if w1 != w2 || r1 != r2 {
			t.Errorf("two scans of %q differ: whole %q / %q, read %q / %q", tmpl, w1, w2, r1, r2)
		}
	})
}
