package values

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// FuzzSpecToValues feeds custom resources (as JSON) and an override to the
// spec -> values translation: it must never panic, never change the custom
// resource, and give the same digest for the same input.
// Seeds: the cases below and testdata/fuzz/FuzzSpecToValues.
func FuzzSpecToValues(f *testing.F) {
	for _, s := range []struct{ cr, key, val string }{
		{`{"spec":{"replicas":2,"image":{"tag":"1.0"}}}`, "image.repository", "nginx"},
		{`{"spec":null}`, "a", "b"},
		{`{"spec":"text"}`, "a", "b"},
		{`{"spec":{"list":[1,{"a":null}],"x":1e300,"y":-0}}`, "list[1].b", "2"},
		{`{"spec":{"a":{"b":{"c":{}}}}}`, "a.b.c.d[3]", "{x,y}"},
		{`{}`, "a\\.b", "true"},
		{`{"spec":{"a":1}}`, "a[0", "x"},
	} {
		f.Add([]byte(s.cr), s.key, s.val)
	}
	f.Fuzz(func(t *testing.T, cr []byte, key, val string) {
		var obj map[string]any
		if err := json.Unmarshal(cr, &obj); err != nil || obj == nil {
			return
		}
		before, _ := json.Marshal(obj)
		spec, err := FromSpec(&unstructured.Unstructured{Object: obj})
		if err != nil {
			return
		}
		spec["added-by-the-fuzzer"] = true // the result must be a copy
		overrides := map[string]string{}
		if key != "" {
			overrides[key] = val
		}
		vals, err := Compute(spec, overrides)
		if after, _ := json.Marshal(obj); string(after) != string(before) {
			t.Fatalf("the custom resource changed: %s -> %s", before, after)
		}
		if err != nil {
			return
		}
		d1, err := Digest("chart", vals)
		if err != nil {
			t.Fatalf("values computed from JSON cannot be digested: %v", err)
		}
		again, err := Compute(spec, overrides)
		if err != nil {
			t.Fatalf("the same input failed the second time: %v", err)
		}
		d2, _ := Digest("chart", again)
		if d1 != d2 || !reflect.DeepEqual(vals, again) {
			t.Fatalf("the same input gave different values: %v vs %v", vals, again)
		}
	})
}
