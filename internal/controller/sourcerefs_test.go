package controller

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/chartkeeper/chartkeeper/internal/release"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// Each object is watched from the first resource that uses it to the last.
func TestSourceRefs(t *testing.T) {
	res := func(name string) release.Resource {
		return release.Resource{GroupKind: schema.GroupKind{Group: "test", Kind: "Exporter"}, NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	obj := func(name string) watches.SourceObject {
		return watches.SourceObject{Kind: watches.SourceSecret, Namespace: "ns", Name: name}
	}
	cm := watches.SourceObject{Kind: watches.SourceConfigMap, Namespace: "ns", Name: "shared"}
	refs := newSourceRefs()
	steps := []struct {
		name           string
		resource       string
		objs           []watches.SourceObject
		added, dropped string
	}{
		{"the first user starts the watches", "a", []watches.SourceObject{cm, obj("a")}, "[ConfigMap ns/shared Secret ns/a]", "[]"},
		{"the same again changes nothing", "a", []watches.SourceObject{cm, obj("a")}, "[]", "[]"},
		{"in another order, nothing", "a", []watches.SourceObject{obj("a"), cm}, "[]", "[]"},
		{"an object listed twice is one", "a", []watches.SourceObject{cm, obj("a"), cm}, "[]", "[]"},
		{"a second user shares the ConfigMap", "b", []watches.SourceObject{cm, obj("b")}, "[Secret ns/b]", "[]"},
		{"a renamed Secret swaps the watches", "a", []watches.SourceObject{cm, obj("a2")}, "[Secret ns/a2]", "[Secret ns/a]"},
		{"the first user gone: the shared one stays", "a", nil, "[]", "[Secret ns/a2]"},
		{"gone twice: nothing more", "a", nil, "[]", "[]"},
		{"the last user gone: nothing is watched", "b", nil, "[]", "[ConfigMap ns/shared Secret ns/b]"},
	}
	for _, s := range steps {
		added, dropped := refs.set(res(s.resource), s.objs)
		sortObjs(added)
		sortObjs(dropped)
		if got := fmt.Sprint(strs(added)); got != s.added {
			t.Errorf("%s: added %s, want %s", s.name, got, s.added)
		}
		if got := fmt.Sprint(strs(dropped)); got != s.dropped {
			t.Errorf("%s: dropped %s, want %s", s.name, got, s.dropped)
		}
	}
	if len(refs.byObject) != 0 || len(refs.byResource) != 0 {
		t.Errorf("left: %v %v", refs.byObject, refs.byResource)
	}
	refs.set(res("a"), []watches.SourceObject{cm})
	refs.set(res("b"), []watches.SourceObject{cm, obj("b")})
	if users := refs.users(cm); len(users) != 2 {
		t.Errorf("users of the shared ConfigMap: %v", users)
	}
	if users := refs.users(obj("b")); len(users) != 1 || users[0] != res("b") {
		t.Errorf("users of b's Secret: %v", users)
	}
}

func sortObjs(objs []watches.SourceObject) {
	slices.SortFunc(objs, func(a, b watches.SourceObject) int {
		if a.String() < b.String() {
			return -1
		}
		return 1
	})
}

func strs(objs []watches.SourceObject) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, o.String())
	}
	return out
}
