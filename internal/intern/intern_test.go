package intern

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fresh returns a copy of s in memory of its own, as a decoder makes one.
func fresh(s string) string { return strings.Clone(s) }

func same(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

func TestString(t *testing.T) {
	long := strings.Repeat("x", MaxLen+1)
	for _, tc := range []struct {
		name   string
		s      string
		shared bool
	}{
		{"a label value", "deployed", true},
		{"a key", "app.kubernetes.io/managed-by", true},
		{"empty", "", false},
		{"longer than MaxLen", long, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := &Table{}
			a, b := tab.String(fresh(tc.s)), tab.String(fresh(tc.s))
			if a != tc.s || b != tc.s {
				t.Fatalf("String changed the value: %q, %q", a, b)
			}
			if got := same(a, b) && tc.s != ""; got != tc.shared {
				t.Errorf("equal strings share their bytes: %v, want %v", got, tc.shared)
			}
		})
	}
}

func TestTableStaysBoundedAndKeepsWhatIsUsed(t *testing.T) {
	tab := &Table{}
	hot := tab.String(fresh("chartkeeper.dev/managed"))
	for i := range 3 * Generation {
		tab.String(fmt.Sprintf("uid-%d", i))
		if i%1000 == 0 {
			if got := tab.String(fresh("chartkeeper.dev/managed")); !same(got, hot) {
				t.Fatalf("after %d strings a string in use was copied anew", i)
			}
		}
	}
	if n := tab.Len(); n > 2*Generation {
		t.Errorf("the table holds %d strings, more than two generations (%d)", n, 2*Generation)
	}
	// A string handed out stays valid after the table forgot it.
	if hot != "chartkeeper.dev/managed" {
		t.Errorf("a forgotten string changed: %q", hot)
	}
}

const crJSON = `{"apiVersion":"bench.chartkeeper.dev/v1","kind":"Bench",
 "metadata":{"name":"%s","namespace":"team-a","uid":"%s","resourceVersion":"%d","labels":{"tier":"web"}},
 "spec":{"message":"v1","replicas":1},
 "status":{"conditions":[{"type":"Ready","status":"True","reason":"Succeeded","message":"revision 1 released and ready"}]}}`

func decode(t *testing.T, name, uid string, rv int) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(fmt.Appendf(nil, crJSON, name, uid, rv)); err != nil {
		t.Fatal(err)
	}
	return u
}

func keyOf(m map[string]any, k string) string {
	for key := range m {
		if key == k {
			return key
		}
	}
	return ""
}

func TestUnstructuredSharesKeysAndValues(t *testing.T) {
	tab := &Table{}
	a, b := decode(t, "one", "uid-1", 7), decode(t, "two", "uid-2", 8)
	if same(keyOf(a.Object, "apiVersion"), keyOf(b.Object, "apiVersion")) {
		t.Fatal("the decoder already shares keys: this test shows nothing")
	}
	tab.Unstructured(a)
	tab.Unstructured(b)

	if !same(keyOf(a.Object, "apiVersion"), keyOf(b.Object, "apiVersion")) {
		t.Error("the top-level keys of two objects are separate copies")
	}
	condA := a.Object["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)
	condB := b.Object["status"].(map[string]any)["conditions"].([]any)[0].(map[string]any)
	if !same(keyOf(condA, "reason"), keyOf(condB, "reason")) {
		t.Error("keys in a list's maps are separate copies")
	}
	for _, f := range [][]string{{"metadata", "namespace"}, {"metadata", "labels", "tier"}, {"kind"}} {
		va, _, _ := unstructured.NestedString(a.Object, f...)
		vb, _, _ := unstructured.NestedString(b.Object, f...)
		if !same(va, vb) {
			t.Errorf("%v: equal values are separate copies", f)
		}
	}
	if !same(condA["message"].(string), condB["message"].(string)) {
		t.Error("equal condition messages are separate copies")
	}
	if a.GetName() != "one" || b.GetUID() != "uid-2" || b.GetResourceVersion() != "8" {
		t.Errorf("values changed: %s %s %s", a.GetName(), b.GetUID(), b.GetResourceVersion())
	}
	for _, u := range []string{"uid-1", "uid-2", "7", "8"} {
		if tab.strings.cur[u] != "" {
			t.Errorf("%q, a uid or resourceVersion, was put in the table", u)
		}
	}
}

func TestMetaSharesLabelsAnnotationsAndOwners(t *testing.T) {
	tab := &Table{}
	meta := func(name string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: fresh(name), Namespace: fresh("team-a"),
			Labels:          map[string]string{fresh("chartkeeper.dev/managed"): fresh("true")},
			Annotations:     map[string]string{fresh("meta.helm.sh/release-name"): fresh(name)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: fresh("bench.chartkeeper.dev/v1"), Kind: fresh("Bench"), Name: fresh(name), UID: "u"}},
			Finalizers:      []string{fresh("chartkeeper.dev/uninstall")},
		}}
	}
	a, b := meta("web"), meta("web")
	tab.Meta(a)
	tab.Meta(b)
	for _, p := range []struct {
		what string
		a, b string
	}{
		{"name", a.Name, b.Name},
		{"namespace", a.Namespace, b.Namespace},
		{"label key", keyOfS(a.Labels), keyOfS(b.Labels)},
		{"label value", a.Labels["chartkeeper.dev/managed"], b.Labels["chartkeeper.dev/managed"]},
		{"annotation key", keyOfS(a.Annotations), keyOfS(b.Annotations)},
		{"owner kind", a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind},
		{"owner apiVersion", a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion},
		{"finalizer", a.Finalizers[0], b.Finalizers[0]},
	} {
		if !same(p.a, p.b) {
			t.Errorf("%s: equal values are separate copies", p.what)
		}
	}
}

func keyOfS(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}

// TestTableKeysAreItsOwnCopies: the table keeps no string of the caller's,
// not even as a map key: a decoded string may be a slice of the decoder's
// whole buffer, which the table would then keep alive.
func TestTableKeysAreItsOwnCopies(t *testing.T) {
	tab := &Table{}
	buffer := strings.Repeat("x", 1<<16) + "chartkeeper.dev/managed"
	decoded := buffer[1<<16:]
	v := tab.String(decoded)
	if same(v, decoded) {
		t.Fatal("String returned the caller's string, not a copy")
	}
	for k := range tab.strings.cur {
		if same(k, decoded) {
			t.Error("the table keeps the caller's string as a key")
		}
	}
	// Found again from the older generation, it is kept under its copy too.
	tab.strings.old, tab.strings.cur = tab.strings.cur, nil
	if got := tab.String(fresh("chartkeeper.dev/managed")); !same(got, v) {
		t.Error("a string of the older generation was copied anew")
	}
	for k := range tab.strings.cur {
		if !same(k, v) {
			t.Error("a string moved from the older generation is kept under the caller's copy")
		}
	}
}
