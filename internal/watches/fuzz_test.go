package watches

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds watches.yaml content to Parse: it must never panic or
// hang, and whatever it accepts must be a complete, usable watch list.
// Seeds: testdata/fuzz/FuzzParse and the examples below.
func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "helm-operator-watches.yaml")); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		"- version: v1\n  kind: Plain\n  chart: chart\n",
		"- {group: a.b, version: v1, kind: K, chart: chart, maxConcurrentReconciles: 0}",
		"- version: v1\n  kind: K\n  chart: chart\n  overrideValues: {a.b: '{{ .x }}', 'c[0]': $HOME}\n",
		"- version: v1\n  kind: K\n  chart: chart\n  selector: {matchExpressions: [{key: a, operator: In}]}\n",
		"- version: v1\n  kind: K\n  chart: chart\n  releaseName: '{{ .Name'\n  reconcilePeriod: -1s\n",
		"- &a {version: v1, kind: K, chart: chart}\n- *a\n",
		"- version: v1\n  kind: K\n  chart: chart\n  drift: {mode: warn, ignore: [{paths: [/spec/replicas], target: {kind: Deployment, name: web}}]}\n",
		"- version: v1\n  kind: K\n  chart: chart\n  drift: {correct: false, mode: correct, ignore: [{paths: ['', '~', /a~]}, {}]}\n",
		"{}", "[]", "- null", "- [1, 2]", "---\n- version: 1e9999\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ws, err := Parse(data, "testdata")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		if len(ws) == 0 {
			t.Fatal("accepted, with no watches")
		}
		seen := map[string]bool{}
		for _, w := range ws {
			gvk := w.GroupVersionKind().String()
			if seen[gvk] {
				t.Fatalf("%s accepted twice", gvk)
			}
			seen[gvk] = true
			if !IsKindName(w.Kind) || w.Version == "" || w.Chart == nil {
				t.Fatalf("accepted an incomplete watch: kind %q, version %q, chart loaded %v", w.Kind, w.Version, w.Chart != nil)
			}
			if w.Concurrency() < 1 || w.Period() < 0 {
				t.Fatalf("accepted concurrency %d, period %s", w.Concurrency(), w.Period())
			}
		}
	})
}
