package intern

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// StringMap interns a map's keys and values, in place.
func (t *Table) StringMap(m map[string]string) {
	for k, v := range m {
		// Assigning to a present key stores the key given: the map then
		// holds the interned copy, and the decoded one is garbage.
		m[t.String(k)] = t.String(v)
	}
}

// Meta interns an object's metadata in place: name, namespace, labels,
// annotations, owner references and finalizers. UID and resourceVersion
// are one object's own and are left as they are. Its labels and
// annotations may then be maps other objects share (Map): o is one a
// cache keeps, and nobody changes it.
func (t *Table) Meta(o metav1.Object) {
	o.SetName(t.String(o.GetName()))
	o.SetNamespace(t.String(o.GetNamespace()))
	o.SetGenerateName(t.String(o.GetGenerateName()))
	o.SetLabels(t.Map(o.GetLabels()))
	o.SetAnnotations(t.Map(o.GetAnnotations()))
	refs := o.GetOwnerReferences()
	for i := range refs {
		r := &refs[i]
		r.APIVersion, r.Kind, r.Name = t.String(r.APIVersion), t.String(r.Kind), t.String(r.Name)
	}
	fs := o.GetFinalizers()
	for i := range fs {
		fs[i] = t.String(fs[i])
	}
}

// Unstructured interns every key of u's content and every string value
// but those of uid and resourceVersion fields, in place.
func (t *Table) Unstructured(u *unstructured.Unstructured) {
	t.value(u.Object)
}

// uniqueFields name values no other object shares.
var uniqueFields = map[string]bool{"uid": true, "resourceVersion": true}

func (t *Table) value(v any) any {
	switch x := v.(type) {
	case string:
		return t.String(x)
	case map[string]any:
		for k, e := range x {
			if uniqueFields[k] {
				x[t.String(k)] = e
				continue
			}
			x[t.String(k)] = t.value(e)
		}
	case []any:
		for i := range x {
			x[i] = t.value(x[i])
		}
	}
	return v
}

// Object interns o as Unstructured when it is one, else its metadata.
func (t *Table) Object(o any) {
	switch x := o.(type) {
	case *unstructured.Unstructured:
		t.Unstructured(x)
	case metav1.Object:
		t.Meta(x)
	}
}

// Kept is the caches' transform for what they keep whole: o without its
// managedFields (nothing in the operator reads them; they were a large
// part of every object), its strings interned in the Default table.
func Kept(o any) (any, error) {
	if m, err := meta.Accessor(o); err == nil && m.GetManagedFields() != nil {
		m.SetManagedFields(nil)
	}
	Default.Object(o)
	return o, nil
}
