package intern

import (
	"fmt"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestKeptStripsAndShares: an object as the caches keep it whole has no
// managedFields, and two of them share their equal strings (keys,
// condition reasons).
func TestKeptStripsAndShares(t *testing.T) {
	decode := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		doc := fmt.Sprintf(`{"apiVersion":"example.com/v1","kind":"Web","metadata":{"name":%q,"namespace":"team-a",
			"managedFields":[{"manager":"kubectl","operation":"Apply"}]},
			"status":{"conditions":[{"type":"Ready","status":"True","reason":"Succeeded"}]}}`, name)
		if err := u.UnmarshalJSON([]byte(doc)); err != nil {
			t.Fatal(err)
		}
		o, err := Kept(u)
		if err != nil {
			t.Fatal(err)
		}
		return o.(*unstructured.Unstructured)
	}
	a, b := decode("a"), decode("b")
	if len(a.GetManagedFields()) > 0 {
		t.Error("managedFields kept")
	}
	reason := func(u *unstructured.Unstructured) string {
		cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		return cs[0].(map[string]any)["reason"].(string)
	}
	if unsafe.StringData(reason(a)) != unsafe.StringData(reason(b)) || unsafe.StringData(a.GetNamespace()) != unsafe.StringData(b.GetNamespace()) {
		t.Error("two cached custom resources hold separate copies of equal strings")
	}
}
