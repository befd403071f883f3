package controller

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// size is what the packed JSON holds.
func (p packedJSON) size() int { return len(p.b) }

// benchStatus is a custom resource's spec and status shaped as the
// operator writes them after an install and an upgrade.
func benchStatus(name string, rev int) []byte {
	digest := func(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s+name))) }
	attempt := func(action string, r int) map[string]any {
		return map[string]any{"action": action, "revision": r, "chart": "bench", "chartVersion": "0.1.0",
			"digest": digest(action + "d"), "valuesDigest": digest(action + "v"),
			"startedAt": "2026-11-28T12:00:01Z", "finishedAt": "2026-11-28T12:00:02Z",
			"result": "Succeeded", "reason": action + "Succeeded", "message": fmt.Sprintf("%s of release %s, revision %d", action, name, r)}
	}
	cond := func(typ, status, reason, msg string) map[string]any {
		return map[string]any{"type": typ, "status": status, "observedGeneration": 2, "lastTransitionTime": "2026-11-28T12:00:03Z", "reason": reason, "message": msg}
	}
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "bench.chartkeeper.dev/v1", "kind": "Bench",
		"spec": map[string]any{"replicas": 1, "message": "v2"},
		"status": map[string]any{
			"observedGeneration": 2,
			"conditions": []any{
				cond("Ready", "True", "Ready", "release "+name+" revision 2 is ready: 3 objects"),
				cond("Released", "True", "UpgradeSucceeded", "upgraded to revision 2"),
				cond("Reconciling", "False", "Ready", ""),
			},
			"release": map[string]any{"name": name, "namespace": "bench-ck-001", "revision": rev, "chart": "bench", "version": "0.1.0",
				"digest": digest("r"), "lastAction": "Upgrade", "lastActionTime": "2026-11-28T12:00:02Z"},
			"history":   []any{attempt("Upgrade", 2), attempt("Install", 1)},
			"inventory": map[string]any{"objects": []any{"apps/v1/Deployment/" + name, "v1/Service/" + name, "v1/ConfigMap/" + name}},
		},
	})
	return b
}

func TestPackedJSONComesBackAsItWas(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "pack.test", Version: "v1", Kind: "RoundTrip"}
	random := make([]byte, 1000) // not larger than the dictionary: not made one
	rand.Read(random)
	big := bytes.Repeat([]byte(`{"a":"`+string(bytes.Repeat([]byte("x"), 100))+`"},`), 1000) // past s2.MaxDictSize
	for _, tc := range []struct {
		name       string
		js         []byte
		compressed bool
	}{
		{name: "the first of its kind", js: benchStatus("bench-0001", 2), compressed: true},
		{name: "another of its kind", js: benchStatus("bench-0002", 2), compressed: true},
		{name: "short", js: []byte(`{}`)},
		{name: "empty", js: []byte{}},
		{name: "incompressible", js: random},
		{name: "larger than a dictionary may be", js: big, compressed: true},
		{name: "and again after it", js: benchStatus("bench-0003", 2), compressed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := packJSON(gvk, bytes.Clone(tc.js))
			if got := p.dict != nil; got != tc.compressed {
				t.Errorf("compressed %v, want %v (%d bytes for %d)", got, tc.compressed, p.size(), len(tc.js))
			}
			var back []byte
			if err := p.unpack(func(js []byte) error { back = bytes.Clone(js); return nil }); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back, tc.js) {
				t.Errorf("unpacked %d bytes differ from the %d packed", len(back), len(tc.js))
			}
		})
	}
}

func TestAKindsObjectsKeepAThirdOfTheirJSON(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "pack.test", Version: "v1", Kind: "Bench"}
	packJSON(gvk, benchStatus("bench-0000", 2)) // the kind's dictionary
	var js, packed int
	for i := 1; i <= 100; i++ {
		b := benchStatus(fmt.Sprintf("bench-%04d", i), 2)
		js += len(b)
		packed += packJSON(gvk, b).size()
	}
	if packed*5 > js*2 { // at most 40%
		t.Errorf("100 objects keep %d bytes of their %d bytes of JSON (%.0f%%)", packed, js, 100*float64(packed)/float64(js))
	}
	t.Logf("100 objects keep %d bytes of their %d bytes of JSON (%.0f%%)", packed, js, 100*float64(packed)/float64(js))
}

func TestAKindsDictionaryGrowsWithItsObjects(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "pack.test", Version: "v1", Kind: "Growing"}
	first := packJSON(gvk, []byte(`{"apiVersion":"pack.test/v1","kind":"Growing","spec":{"replicas":1}}`))
	same := packJSON(gvk, []byte(`{"apiVersion":"pack.test/v1","kind":"Growing","spec":{"replicas":2}}`))
	if first.dict == nil || same.dict != first.dict {
		t.Fatalf("one dictionary for objects of one size: %p, %p", first.dict, same.dict)
	}
	larger := packJSON(gvk, benchStatus("grown", 2))
	if larger.dict == first.dict {
		t.Error("an object much larger than the dictionary did not replace it")
	}
	other := packJSON(schema.GroupVersionKind{Group: "pack.test", Version: "v1", Kind: "Other"}, benchStatus("grown", 2))
	if other.dict == larger.dict {
		t.Error("two kinds share a dictionary")
	}
	for _, p := range []packedJSON{first, same} { // packed against the old one, still unpacked
		if err := p.unpack(func(js []byte) error {
			if !json.Valid(js) {
				return fmt.Errorf("not JSON: %s", js)
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
	}
}

func FuzzPackedJSON(f *testing.F) {
	f.Add(benchStatus("fuzz", 2))
	f.Add([]byte(`{"spec":{}}`))
	gvk := schema.GroupVersionKind{Group: "pack.test", Version: "v1", Kind: "Fuzz"}
	f.Fuzz(func(t *testing.T, js []byte) {
		var back []byte
		if err := packJSON(gvk, bytes.Clone(js)).unpack(func(b []byte) error { back = bytes.Clone(b); return nil }); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(back, js) {
			t.Fatalf("%q came back as %q", js, back)
		}
	})
}

// BenchmarkPackedJSON: what packing and unpacking a custom resource's
// JSON costs, beside decoding it (which every read does anyway).
func BenchmarkPackedJSON(b *testing.B) {
	gvk := schema.GroupVersionKind{Group: "pack.test", Version: "v1", Kind: "Bench"}
	packJSON(gvk, benchStatus("bench-0000", 2))
	js := benchStatus("bench-0001", 2)
	b.Run("pack", func(b *testing.B) {
		for range b.N {
			packJSON(gvk, js)
		}
	})
	p := packJSON(gvk, js)
	b.Run("unpack", func(b *testing.B) {
		for range b.N {
			p.unpack(func([]byte) error { return nil })
		}
	})
	b.Run("decode the JSON", func(b *testing.B) {
		for range b.N {
			var obj map[string]any
			json.Unmarshal(js, &obj)
		}
	})
}
