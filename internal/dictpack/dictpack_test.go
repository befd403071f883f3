package dictpack

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"
)

// resourceJSON is a custom resource's spec and status shaped as the
// operator writes them after an install and an upgrade.
func resourceJSON(name string) []byte {
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
			"release": map[string]any{"name": name, "namespace": "bench-ck-001", "revision": 2, "chart": "bench", "version": "0.1.0",
				"digest": digest("r"), "lastAction": "Upgrade", "lastActionTime": "2026-11-28T12:00:02Z"},
			"history":   []any{attempt("Upgrade", 2), attempt("Install", 1)},
			"inventory": map[string]any{"objects": []any{"apps/v1/Deployment/" + name, "v1/Service/" + name, "v1/ConfigMap/" + name}},
		},
	})
	return b
}

// releaseBody is a Helm release's JSON without its chart, as the release
// storage keeps it: a ConfigMap, a Service and a Deployment rendered for
// release name in namespace ns.
func releaseBody(name, ns, message string, revision int) []byte {
	object := func(file, apiVersion, kind, rest string) string {
		return fmt.Sprintf("---\n# Source: bench/templates/%s\napiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n  labels:\n"+
			"    app.kubernetes.io/name: bench\n    app.kubernetes.io/instance: %s\n    app.kubernetes.io/managed-by: Helm\n"+
			"    helm.sh/chart: bench-0.1.0\n%s", file, apiVersion, kind, name, name, rest)
	}
	selector := fmt.Sprintf("app.kubernetes.io/name: bench\n%[1]sapp.kubernetes.io/instance: %[2]s\n", "%[1]s", name)
	manifest := object("configmap.yaml", "v1", "ConfigMap", fmt.Sprintf("data:\n  message: %q\n", message)) +
		object("service.yaml", "v1", "Service", "spec:\n  type: ClusterIP\n  ports:\n    - port: 80\n      targetPort: http\n"+
			"      protocol: TCP\n      name: http\n  selector:\n    "+fmt.Sprintf(selector, "    ")) +
		object("deployment.yaml", "apps/v1", "Deployment", "spec:\n  replicas: 1\n  selector:\n    matchLabels:\n      "+
			fmt.Sprintf(selector, "      ")+"  template:\n    metadata:\n      annotations:\n"+
			fmt.Sprintf("        bench/message: %q\n", message)+"      labels:\n        "+fmt.Sprintf(selector, "        ")+
			"    spec:\n      containers:\n        - name: bench\n          image: \"registry.k8s.io/pause:3.10\"\n"+
			"          ports:\n            - name: http\n              containerPort: 80\n")
	b, _ := json.Marshal(map[string]any{
		"name": name,
		"info": map[string]any{"first_deployed": "2026-11-28T14:48:38.123456789Z", "last_deployed": "2026-11-28T14:49:38.123456789Z",
			"deleted": "", "description": "Upgrade complete", "status": "deployed"},
		"config":    map[string]any{"replicas": 1, "message": message},
		"manifest":  manifest,
		"version":   revision,
		"namespace": ns,
		"labels":    map[string]any{"chartkeeper.dev/owner": "bench"},
	})
	return b
}

func unpacked(t testing.TB, p Packed) []byte {
	t.Helper()
	var back []byte
	if err := p.Unpack(func(b []byte) error { back = bytes.Clone(b); return nil }); err != nil {
		t.Fatal(err)
	}
	return back
}

func TestPackedComesBackAsItWas(t *testing.T) {
	var f Families[string]
	random := make([]byte, 1000) // not longer than the dictionary: not made one
	rand.Read(random)
	big := bytes.Repeat([]byte(`{"a":"`+string(bytes.Repeat([]byte("x"), 100))+`"},`), 1000) // past s2.MaxDictSize
	for _, tc := range []struct {
		name       string
		b          []byte
		compressed bool
	}{
		{name: "the first of its family", b: resourceJSON("bench-0001"), compressed: true},
		{name: "another of its family", b: resourceJSON("bench-0002"), compressed: true},
		{name: "short", b: []byte(`{}`)},
		{name: "empty", b: []byte{}},
		{name: "incompressible", b: random},
		{name: "longer than a dictionary may be", b: big, compressed: true},
		{name: "and again after it", b: resourceJSON("bench-0003"), compressed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := f.Pack("round-trip", bytes.Clone(tc.b))
			if got := p.Compressed(); got != tc.compressed {
				t.Errorf("compressed %v, want %v (%d bytes for %d)", got, tc.compressed, p.Len(), len(tc.b))
			}
			if back := unpacked(t, p); !bytes.Equal(back, tc.b) {
				t.Errorf("unpacked %d bytes differ from the %d packed", len(back), len(tc.b))
			}
		})
	}
}

func gzipLen(b []byte) int {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Len()
}

// TestAFamilyKeepsAFractionOfItsBytes: custom resources of one kind keep
// at most 40% of their JSON; release bodies of one chart keep less than
// gzip at its best would, by half at least.
func TestAFamilyKeepsAFractionOfItsBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		of   func(i int) []byte
		want func(b []byte) int // at most this many bytes kept
	}{
		{name: "custom resources", of: func(i int) []byte { return resourceJSON(fmt.Sprintf("bench-%04d", i)) },
			want: func(b []byte) int { return len(b) * 2 / 5 }},
		{name: "release bodies", of: func(i int) []byte {
			return releaseBody(fmt.Sprintf("bench-%04d", i), fmt.Sprintf("bench-ck-%03d", i/20), "v2", 2)
		}, want: func(b []byte) int { return gzipLen(b) / 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f Families[string]
			f.Pack(tc.name, tc.of(0)) // the family's dictionary
			var raw, kept, want int
			for i := 1; i <= 100; i++ {
				b := tc.of(i)
				raw += len(b)
				kept += f.Pack(tc.name, b).Len()
				want += tc.want(b)
			}
			if kept > want {
				t.Errorf("100 strings keep %d bytes of their %d (want at most %d)", kept, raw, want)
			}
			t.Logf("100 strings keep %d bytes of their %d (%.0f%%; bound %d)", kept, raw, 100*float64(kept)/float64(raw), want)
		})
	}
}

func TestAFamilysDictionaryGrowsWithIt(t *testing.T) {
	var f Families[string]
	first := f.Pack("growing", []byte(`{"apiVersion":"pack.test/v1","kind":"Growing","spec":{"replicas":1}}`))
	same := f.Pack("growing", []byte(`{"apiVersion":"pack.test/v1","kind":"Growing","spec":{"replicas":2}}`))
	if first.dict == nil || same.dict != first.dict {
		t.Fatalf("one dictionary for strings of one length: %p, %p", first.dict, same.dict)
	}
	longer := f.Pack("growing", resourceJSON("grown"))
	if longer.dict == first.dict {
		t.Error("a string much longer than the dictionary did not replace it")
	}
	if other := f.Pack("other", resourceJSON("grown")); other.dict == longer.dict {
		t.Error("two families share a dictionary")
	}
	for _, p := range []Packed{first, same} { // packed against the old one, still unpacked
		if !json.Valid(unpacked(t, p)) {
			t.Errorf("not JSON: %s", unpacked(t, p))
		}
	}
}

// TestFamiliesAreBounded: past Max families, the dictionaries are made
// anew, and what was packed before still unpacks.
func TestFamiliesAreBounded(t *testing.T) {
	f := Families[int]{Max: 4}
	var packed []Packed
	for i := range 10 {
		packed = append(packed, f.Pack(i, resourceJSON(fmt.Sprint(i))))
	}
	held := 0
	f.dicts.Range(func(any, any) bool { held++; return true })
	if held > 4 {
		t.Errorf("%d families hold a dictionary, want at most 4", held)
	}
	for i, p := range packed {
		if !p.Compressed() || !bytes.Equal(unpacked(t, p), resourceJSON(fmt.Sprint(i))) {
			t.Errorf("string %d: compressed %v, or came back changed", i, p.Compressed())
		}
	}
}

// TestACorruptBlockIsAnError: a block that does not decode is an error
// for the caller, never a panic or a wrong string.
func TestACorruptBlockIsAnError(t *testing.T) {
	var f Families[string]
	p := f.Pack("corrupt", resourceJSON("c"))
	if !p.Compressed() {
		t.Fatal("not compressed")
	}
	for name, q := range map[string]Packed{
		"cut short": {b: p.b[:len(p.b)/2], dict: p.dict},
		"no block":  {b: nil, dict: p.dict},
	} {
		if err := q.Unpack(func([]byte) error { return nil }); err == nil {
			t.Errorf("%s: unpacked without an error", name)
		}
	}
}

func TestANilFamiliesPacksNothing(t *testing.T) {
	var f *Families[string]
	b := resourceJSON("nil")
	if p := f.Pack("x", b); p.Compressed() || !bytes.Equal(unpacked(t, p), b) {
		t.Error("a nil Families compressed, or changed the string")
	}
}

func FuzzPacked(f *testing.F) {
	f.Add(resourceJSON("fuzz"))
	f.Add(releaseBody("fuzz", "ns", "v1", 1))
	f.Add([]byte(`{"spec":{}}`))
	var fam Families[string]
	f.Fuzz(func(t *testing.T, b []byte) {
		if back := unpacked(t, fam.Pack("fuzz", bytes.Clone(b))); !bytes.Equal(back, b) {
			t.Fatalf("%q came back as %q", b, back)
		}
	})
}

// BenchmarkPacked: what packing and unpacking costs, beside decoding a
// custom resource's JSON (which every read does anyway) and gzip at its
// best (what release bodies were kept as before).
func BenchmarkPacked(b *testing.B) {
	var f Families[string]
	for _, tc := range []struct {
		name  string
		first []byte
		next  []byte
	}{
		{"resource", resourceJSON("bench-0000"), resourceJSON("bench-0001")},
		{"release", releaseBody("bench-0000", "bench-ck-000", "v1", 1), releaseBody("bench-0001", "bench-ck-000", "v2", 2)},
	} {
		f.Pack(tc.name, tc.first)
		b.Run(tc.name+"/pack", func(b *testing.B) {
			for range b.N {
				f.Pack(tc.name, tc.next)
			}
		})
		p := f.Pack(tc.name, tc.next)
		b.Run(tc.name+"/unpack", func(b *testing.B) {
			for range b.N {
				p.Unpack(func([]byte) error { return nil })
			}
		})
	}
	js := resourceJSON("bench-0001")
	b.Run("resource/decode the JSON", func(b *testing.B) {
		for range b.N {
			var obj map[string]any
			json.Unmarshal(js, &obj)
		}
	})
	body := releaseBody("bench-0001", "bench-ck-000", "v2", 2)
	b.Run("release/gzip", func(b *testing.B) { // one writer, reset for each
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		for range b.N {
			buf.Reset()
			w.Reset(&buf)
			w.Write(body)
			w.Close()
		}
	})
}
