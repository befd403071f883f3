package release

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestRememberedObjectsReadWhatWasRenderedFromTheirRevision: the objects
// a release's memo keeps hold nothing rendered; what a drift check or a
// correction needs is read from their revision, and is what that revision
// rendered (after an upgrade, the new revision's, not the old one's).
func TestRememberedObjectsReadWhatWasRenderedFromTheirRevision(t *testing.T) {
	m := newMachine(t, nil)
	m.run(5)
	m.obj.Object["spec"] = map[string]any{"data": "v2"}
	m.obj.SetGeneration(2)
	m.run(5)

	ref, err := m.target.Watch.Release(m.obj.GetName(), m.obj.GetNamespace())
	if err != nil {
		t.Fatal(err)
	}
	key := releaseKey(ref)
	version := lastKnownRevision(&m.st)
	objs, ok := m.engine.manifests.get(key, version)
	if !ok || len(objs) == 0 {
		t.Fatalf("revision %d of %s is not remembered", version, key)
	}
	var cm object
	for _, ob := range objs {
		if len(ob.rendered) > 0 || ob.from == nil || ob.from.version != version {
			t.Errorf("%s is remembered with %d rendered bytes, from %+v", ob, len(ob.rendered), ob.from)
		}
		if ob.GVK.Kind == "ConfigMap" && ob.Name == "app" {
			cm = ob
		}
	}
	gets := m.helm.gets
	got, err := m.engine.renderedOf(context.Background(), cm)
	if err != nil {
		t.Fatal(err)
	}
	for _, ob := range objs { // every object's drift check reads the revision
		if _, err := m.engine.renderedOf(context.Background(), ob); err != nil {
			t.Fatal(err)
		}
	}
	if n := m.helm.gets - gets; n != 1 {
		t.Errorf("reading back %d objects decoded their revision %d times, want once", len(objs)+1, n)
	}
	if d, _, _ := unstructured.NestedString(got.Object, "data", "data"); d != "v2" || got.GetName() != "app" {
		t.Errorf("read back %s with data %q, want v2", got.GetName(), d)
	}

	missing := cm
	missing.Name, missing.GVK = "not-rendered", schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	if _, err := m.engine.renderedOf(context.Background(), missing); err == nil {
		t.Error("an object the revision does not hold was read back")
	}
}

func TestSameObject(t *testing.T) {
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	role := schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	objs := []object{
		{GVK: cm, Namespace: "a", Name: "x"}, {GVK: cm, Namespace: "b", Name: "x"},
		{GVK: role, Namespace: "", Name: "r"},
	}
	for _, tc := range []struct {
		name string
		ob   object
		want int // index in objs; -1: none
	}{
		{"kind, namespace and name", object{GVK: cm, Namespace: "b", Name: "x"}, 1},
		{"two of that kind and name, neither in this namespace", object{GVK: cm, Namespace: "c", Name: "x"}, -1},
		{"one of that kind and name, read as namespaced before", object{GVK: role, Namespace: "a", Name: "r"}, 2},
		{"another name", object{GVK: cm, Namespace: "a", Name: "y"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := sameObject(objs, tc.ob)
			if ok != (tc.want >= 0) || (ok && got.String() != objs[tc.want].String()) {
				t.Errorf("sameObject = %s, %v; want index %d", got, ok, tc.want)
			}
		})
	}
}

func TestRenderedRevisionsStayBounded(t *testing.T) {
	c := newRenderedRevisions()
	for v := 1; v <= renderedKept+5; v++ {
		c.put(revisionRef{release: "r", namespace: "n", version: v}, []object{{Name: "o"}})
	}
	if len(c.objs) != renderedKept || len(c.refs) != renderedKept {
		t.Errorf("holds %d revisions (%d refs), want %d", len(c.objs), len(c.refs), renderedKept)
	}
	if _, ok := c.get(revisionRef{release: "r", namespace: "n", version: 1}); ok {
		t.Error("the oldest revision is still held")
	}
	if _, ok := c.get(revisionRef{release: "r", namespace: "n", version: renderedKept + 5}); !ok {
		t.Error("the newest revision is not held")
	}
}
