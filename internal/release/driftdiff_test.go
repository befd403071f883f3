package release

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestDriftFields(t *testing.T) {
	deployment := object{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespace: "ns", Name: "web"}
	replicas := []watches.DriftIgnore{{Paths: []string{"/spec/replicas"}, Target: &watches.DriftTarget{Kind: "Deployment"}}}
	tests := []struct {
		name       string
		live, want string
		ignore     []watches.DriftIgnore
		ob         object
		fields     string // the differing paths
		patch      string // the JSON patch sending them back
	}{
		{name: "same", live: `{"spec":{"replicas":2}}`, want: `{"spec":{"replicas":2}}`},
		{name: "scalar", live: `{"spec":{"replicas":5,"paused":false}}`, want: `{"spec":{"replicas":2,"paused":false}}`,
			fields: "/spec/replicas", patch: `[{"op":"replace","path":"/spec/replicas","value":2}]`},
		{name: "ignored path", live: `{"spec":{"replicas":5}}`, want: `{"spec":{"replicas":2}}`, ignore: replicas, ob: deployment},
		{name: "ignored path of another kind", live: `{"spec":{"replicas":5}}`, want: `{"spec":{"replicas":2}}`, ignore: replicas,
			ob: object{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, Name: "db"}, fields: "/spec/replicas",
			patch: `[{"op":"replace","path":"/spec/replicas","value":2}]`},
		{name: "below an ignored path", live: `{"metadata":{"annotations":{"a":"x","b":"y"}}}`, want: `{"metadata":{"annotations":{"a":"1","b":"2"}}}`,
			ignore: []watches.DriftIgnore{{Paths: []string{"/metadata/annotations"}}}},
		{name: "a prefix that is not a parent is not ignored", live: `{"spec":{"replicasMax":5}}`, want: `{"spec":{"replicasMax":2}}`, ignore: replicas, ob: deployment,
			fields: "/spec/replicasMax", patch: `[{"op":"replace","path":"/spec/replicasMax","value":2}]`},
		{name: "missing key added", live: `{"data":{}}`, want: `{"data":{"k":"v"}}`,
			fields: "/data/k", patch: `[{"op":"add","path":"/data/k","value":"v"}]`},
		{name: "extra key removed", live: `{"data":{"k":"v","x":"y"}}`, want: `{"data":{"k":"v"}}`,
			fields: "/data/x", patch: `[{"op":"remove","path":"/data/x"}]`},
		{name: "array element", live: `{"c":[{"image":"a"},{"image":"b"}]}`, want: `{"c":[{"image":"a"},{"image":"c"}]}`,
			fields: "/c/1/image", patch: `[{"op":"replace","path":"/c/1/image","value":"c"}]`},
		{name: "array of another length replaced whole", live: `{"c":[1]}`, want: `{"c":[1,2]}`,
			fields: "/c", patch: `[{"op":"replace","path":"/c","value":[1,2]}]`},
		{name: "type changed", live: `{"a":{"b":1}}`, want: `{"a":"s"}`, fields: "/a", patch: `[{"op":"replace","path":"/a","value":"s"}]`},
		{name: "keys escaped", live: `{"metadata":{"labels":{"app.kubernetes.io/name":"x","a~b":"1"}}}`, want: `{"metadata":{"labels":{"app.kubernetes.io/name":"web","a~b":"1"}}}`,
			fields: "/metadata/labels/app.kubernetes.io~1name", patch: `[{"op":"replace","path":"/metadata/labels/app.kubernetes.io~1name","value":"web"}]`},
		{name: "escaped ignore path", live: `{"metadata":{"labels":{"app.kubernetes.io/name":"x"}}}`, want: `{"metadata":{"labels":{"app.kubernetes.io/name":"web"}}}`,
			ignore: []watches.DriftIgnore{{Paths: []string{"/metadata/labels/app.kubernetes.io~1name"}}}},
		{name: "several, sorted", live: `{"b":1,"a":1}`, want: `{"b":2,"a":2}`, fields: "/a,/b",
			patch: `[{"op":"replace","path":"/a","value":2},{"op":"replace","path":"/b","value":2}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diffs := withoutIgnored(diffFields(decode(t, tt.live), decode(t, tt.want)), ignoredPaths(tt.ignore, tt.ob))
			paths := make([]string, len(diffs))
			for i, d := range diffs {
				paths[i] = d.Path
			}
			if got := strings.Join(paths, ","); got != tt.fields {
				t.Errorf("fields %q, want %q", got, tt.fields)
			}
			if len(diffs) == 0 {
				return
			}
			b, _ := json.Marshal(jsonPatch(diffs))
			if string(b) != tt.patch {
				t.Errorf("patch %s, want %s", b, tt.patch)
			}
		})
	}
}

func TestDriftMessageIsBounded(t *testing.T) {
	var diffs []fieldDiff
	for i := range 8 {
		diffs = append(diffs, fieldDiff{Path: fmt.Sprintf("/data/k%d", i)})
	}
	d := Drift{Object: object{GVK: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, Namespace: "ns", Name: "c"}, Change: DriftEdited, fields: diffs}
	want := "ConfigMap ns/c (edited: /data/k0, /data/k1, /data/k2, /data/k3, /data/k4 and 3 more)"
	if got := d.String(); got != want {
		t.Errorf("%q, want %q", got, want)
	}
	many := make([]Drift, 12)
	for i := range many {
		many[i] = d
	}
	if got := driftList(many, maxDriftObjects); !strings.HasSuffix(got, ", and 2 more") || strings.Count(got, "ConfigMap") != 10 {
		t.Errorf("driftList: %s", got)
	}
}
