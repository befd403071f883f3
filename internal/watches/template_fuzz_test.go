package watches

import (
	"strings"
	"testing"
	"unicode/utf8"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/chartkeeper/chartkeeper/test/framework/fuzzing"
)

// FuzzReleaseTemplates feeds releaseName and releaseNamespace templates
// (through Parse, as watches.yaml gives them) and a custom resource's name
// and namespace (as the API server allows them) to Release. A template
// is either refused at load with an error naming its field, or, for every
// resource, gives the same answer each time: a clear error, or a release
// name Helm accepts (chartutil.ValidateReleaseName: DNS-1123, at most 53
// characters) in a valid namespace name. Never a panic, never an empty
// name; the default templates give the resource's own name and namespace.
// Seeds: the cases below and testdata/fuzz/FuzzReleaseTemplates.
func FuzzReleaseTemplates(f *testing.F) {
	for _, s := range []struct{ name, ns, crName, crNS string }{
		{"", "", "web", "team-a"},
		{"", "", "cluster-wide", ""},
		{"", "{{ .Namespace }}-target", "web", "team-a"},
		{"{{ .Name }}-db", "", "db", "default"},
		{"rel-{{ .Name }}", "{{ .Namespace }}", "web-1.example.com", "b"},
		{"{{ .Kind }}-{{ .Name }}", "shared", "db", "team-a"},
		{"{{ .Name }}", "Team_A", "web", "ns"},
		{"-{{ .Name }}-", "", "web", "ns"},
		{"{{ .Name }}.", "", "web", "ns"},
		{"{{ printf \"%.5s\" .Name }}", "apps", strings.Repeat("a", 60), "ns"},
		{"{{ printf \"%060d\" 1 }}", "", "web", "ns"},
		{"{{ .Missing }}", "", "web", "ns"},
		{"{{ .Name", "", "web", "ns"},
		{"{{ if .Namespace }}{{ .Namespace }}-{{ .Name }}{{ else }}global-{{ .Name }}{{ end }}", "{{ or .Namespace \"default\" }}", "x", ""},
		{"{{ with .Namespace }}{{ . }}{{ end }}", "", "x", ""},
		{"{{ range 1000000000 }}{{ end }}{{ .Name }}", "", "web", "ns"},
		{"{{ define \"a\" }}{{ template \"a\" }}{{ end }}{{ template \"a\" }}", "", "web", "ns"},
		{"{{ block \"b\" . }}{{ .Name }}{{ end }}", "", "web", "ns"},
		{"{{ if true }}{{ range $i, $c := .Name }}{{ end }}{{ end }}x", "", "web", "ns"},
		{"{{ js .Name }}{{ urlquery .Namespace }}", "", "web", "ns"},
		{"{{ slice .Name 1 }}", "{{ index .Namespace 0 }}", "web", "ns"},
		{"{{ len .Name }}", "{{ print 1 }}", "w", "n"},
	} {
		f.Add(s.name, s.ns, s.crName, s.crNS)
	}
	f.Fuzz(func(t *testing.T, nameT, nsT, name, ns string) {
		if !utf8.ValidString(nameT) || !utf8.ValidString(nsT) {
			return // watches.yaml is UTF-8
		}
		entry := []byte("- {version: v1, kind: Fuzz, chart: chart, releaseName: " + fuzzing.YAMLString(nameT) + ", releaseNamespace: " + fuzzing.YAMLString(nsT) + "}\n")
		ws, err := Parse(entry, "testdata")
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, `"releaseName"`) && !strings.Contains(msg, `"releaseNamespace"`) {
				t.Fatalf("refused without naming the template's field: %v", err)
			}
			return
		}
		if len(validation.IsDNS1123Subdomain(name)) > 0 || ns != "" && len(validation.IsDNS1123Label(ns)) > 0 {
			return // no such custom resource
		}
		w := ws[0]
		ref, err := w.Release(name, ns)
		again, err2 := w.Release(name, ns)
		if ref != again || (err == nil) != (err2 == nil) {
			t.Fatalf("two answers for %s/%s: %+v (%v), then %+v (%v)", ns, name, ref, err, again, err2)
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		if e := chartutil.ValidateReleaseName(ref.Name); e != nil {
			t.Fatalf("release name %q accepted for %s/%s, Helm refuses it: %v", ref.Name, ns, name, e)
		}
		if msgs := validation.IsDNS1123Label(ref.Namespace); len(msgs) > 0 {
			t.Fatalf("release namespace %q accepted for %s/%s: %v", ref.Namespace, ns, name, msgs)
		}
		if nameT == "" && ref.Name != name || nsT == "" && ref.Namespace != ns {
			t.Fatalf("the default templates gave %+v for %s/%s", ref, ns, name)
		}
	})
}
