package release

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	jsonpatch "github.com/evanphx/json-patch"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/watches"
	"github.com/chartkeeper/chartkeeper/test/framework/fuzzing"
)

// FuzzDriftIgnore feeds a drift.ignore path (through watches.Parse, as
// watches.yaml gives it), a released object and its live form (JSON) to
// the drift comparison. The path loads exactly when it is a JSON pointer,
// else the load error names drift.ignore[0].paths[0]. On the objects:
//   - the differences the rule drops are exactly those at or below the
//     path, and only when the rule's target matches the object;
//   - the JSON patch of all differences (RFC 6902, applied as the API
//     server does, evanphx/json-patch) turns the live object into the
//     released one;
//   - the patch of the kept differences applies, sets every kept field to
//     its released value, and leaves the ignored field as it is live,
//     unless a kept difference replaces a whole ancestor of it (a type or
//     array length changed above it: the ancestor's drift is not ignored).
//
// Seeds: the cases below and testdata/fuzz/FuzzDriftIgnore.
func FuzzDriftIgnore(f *testing.F) {
	for _, s := range []struct{ path, kind, live, want string }{
		{"/spec/replicas", "Deployment", `{"spec":{"replicas":5,"paused":false}}`, `{"spec":{"replicas":2,"paused":true}}`},
		{"/spec/replicas", "StatefulSet", `{"spec":{"replicas":5}}`, `{"spec":{"replicas":2}}`},
		{"/metadata/annotations", "ConfigMap", `{"metadata":{"annotations":{"a":"x","b":"y"}},"data":{"k":"v"}}`, `{"metadata":{"annotations":{"a":"1"}},"data":{"k":"w"}}`},
		{"/metadata/labels/app.kubernetes.io~1name", "Service", `{"metadata":{"labels":{"app.kubernetes.io/name":"x","a~b":"1"}}}`, `{"metadata":{"labels":{"app.kubernetes.io/name":"web","a~b":"2"}}}`},
		{"/spec/template/spec/containers/0/image", "Deployment", `{"spec":{"template":{"spec":{"containers":[{"image":"a:2"},{"image":"sidecar"}]}}}}`, `{"spec":{"template":{"spec":{"containers":[{"image":"a:1"}]}}}}`},
		{"/spec/template/spec/containers/1/image", "Deployment", `{"spec":{"template":{"spec":{"containers":[{"image":"a"},{"image":"b2"}]}}}}`, `{"spec":{"template":{"spec":{"containers":[{"image":"a2"},{"image":"b"}]}}}}`},
		{"/spec", "Deployment", `{"spec":"text"}`, `{"spec":{"replicas":1}}`},
		{"/data/", "ConfigMap", `{"data":{"":"x","k":"1"}}`, `{"data":{"":"y"}}`},
		{"/a~0b/c~1d", "X", `{"a~b":{"c/d":1,"e":2}}`, `{"a~b":{"c/d":3,"e":4}}`},
		{"/spec/replicasMax", "Deployment", `{"spec":{"replicas":5}}`, `{"spec":{"replicas":2}}`},
		{"spec/replicas", "Deployment", `{}`, `{}`},
		{"/a~", "Deployment", `{}`, `{}`},
		{"", "Deployment", `{}`, `{}`},
		{"/", "X", `{"":{"a":null}}`, `{"":{"a":[]}}`},
		{"/-", "X", `{"-":[1,2]}`, `{"-":[2,1]}`},
		{"/n", "X", `{"n":1e300,"m":[true,null]}`, `{"n":-0,"m":[false,{}]}`},
	} {
		f.Add(s.path, s.kind, []byte(s.live), []byte(s.want))
	}
	f.Fuzz(func(t *testing.T, path, kind string, liveJSON, wantJSON []byte) {
		if !utf8.ValidString(path) {
			return // watches.yaml is UTF-8
		}
		entry := []byte("- {version: v1, kind: Fuzz, chart: chart, drift: {ignore: [{paths: [" + fuzzing.YAMLString(path) + "], target: {kind: Deployment}}]}}\n")
		ws, err := watches.Parse(entry, "../watches/testdata")
		if valid := watches.IsJSONPointer(path); (err == nil) != valid {
			t.Fatalf("path %q: JSON pointer %v, load error %v", path, valid, err)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "drift.ignore[0].paths[0]") {
				t.Fatalf("the load error does not name the path: %v", err)
			}
			return
		}
		var live, want map[string]any
		if json.Unmarshal(liveJSON, &live) != nil || json.Unmarshal(wantJSON, &want) != nil || live == nil || want == nil {
			return
		}
		ob := object{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: kind}, Namespace: "ns", Name: "web"}
		ignored := ignoredPaths(ws[0].Policy.DriftIgnore, ob)
		diffs := diffFields(live, want)
		kept := withoutIgnored(diffs, ignored)

		applies := kind == "Deployment"
		i := 0
		for _, d := range diffs {
			switch drop := applies && under(d.Path, path); {
			case i < len(kept) && kept[i].Path == d.Path:
				if drop {
					t.Fatalf("kept %s, below the ignored %s", d.Path, path)
				}
				i++
			case !drop:
				t.Fatalf("dropped %s (ignoring %q, applies %v)", d.Path, path, applies)
			}
		}
		if i != len(kept) {
			t.Fatalf("kept %d differences that were not found", len(kept)-i)
		}

		if got := applyPatch(t, live, diffs); !reflect.DeepEqual(got, normalize(t, want)) {
			t.Fatalf("the patch of every difference gives %v, want %v", got, want)
		}
		got := applyPatch(t, live, kept)
		for _, d := range kept {
			w, wok := lookupPointer(normalize(t, want), d.Path)
			g, gok := lookupPointer(got, d.Path)
			if wok != gok || !reflect.DeepEqual(w, g) {
				t.Fatalf("%s after the patch: %v (%v), released %v (%v)", d.Path, g, gok, w, wok)
			}
		}
		for _, d := range kept {
			if strings.HasPrefix(path, d.Path+"/") {
				return // an ancestor is replaced whole
			}
		}
		l, lok := lookupPointer(normalize(t, live), path)
		g, gok := lookupPointer(got, path)
		if applies && (lok != gok || !reflect.DeepEqual(l, g)) {
			t.Fatalf("the ignored %s changed: %v (%v), live %v (%v)", path, g, gok, l, lok)
		}
	})
}

// applyPatch applies the patch jsonPatch makes of diffs to doc, as the API
// server would, and returns the result decoded.
func applyPatch(t *testing.T, doc map[string]any, diffs []fieldDiff) any {
	t.Helper()
	docJSON, _ := json.Marshal(doc)
	ops, err := json.Marshal(jsonPatch(diffs))
	if err != nil {
		t.Fatalf("the patch cannot be encoded: %v", err)
	}
	p, err := jsonpatch.DecodePatch(ops)
	if err != nil {
		t.Fatalf("patch %s does not decode: %v", ops, err)
	}
	out, err := p.Apply(docJSON)
	if err != nil {
		t.Fatalf("patch %s does not apply to %s: %v", ops, docJSON, err)
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// normalize round-trips v through JSON, as the patched document is.
func normalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// lookupPointer resolves a JSON pointer (RFC 6901) in a decoded document.
func lookupPointer(doc any, pointer string) (any, bool) {
	if pointer == "" {
		return doc, true
	}
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n := doc.(type) {
		case map[string]any:
			v, ok := n[tok]
			if !ok {
				return nil, false
			}
			doc = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) || strconv.Itoa(i) != tok {
				return nil, false
			}
			doc = n[i]
		default:
			return nil, false
		}
	}
	return doc, true
}
