package intern

import (
	"fmt"
	"maps"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sameMap reports whether a and b are one map (not only equal ones).
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

func labels(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[fresh(kv[i])] = fresh(kv[i+1])
	}
	return m
}

func TestMapSharesEqualMaps(t *testing.T) {
	release := []string{"app.kubernetes.io/name", "bench", "app.kubernetes.io/instance", "bench-0001", "chartkeeper.dev/managed", "true"}
	for _, tc := range []struct {
		name   string
		a, b   map[string]string
		shared bool
	}{
		{"equal maps", labels(release...), labels(release...), true},
		{"equal maps built in another order", labels(release...), labels(append(release[4:6:6], release[:4]...)...), true},
		{"one value differs", labels(release...), labels(append(append([]string{}, release[:3]...), "bench-0002", "chartkeeper.dev/managed", "true")...), false},
		{"a key more", labels(release...), labels(append(append([]string{}, release...), "tier", "web")...), false},
		{"a value moved to another key", labels("a", "x", "b", "y"), labels("a", "y", "b", "x"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := &Table{}
			wantA, wantB := maps.Clone(tc.a), maps.Clone(tc.b)
			a, b := tab.Map(tc.a), tab.Map(tc.b)
			if !maps.Equal(a, wantA) || !maps.Equal(b, wantB) {
				t.Fatalf("Map changed the content: %v, %v", a, b)
			}
			if got := sameMap(a, b); got != tc.shared {
				t.Errorf("one map for both: %v, want %v", got, tc.shared)
			}
		})
	}
	t.Run("nil and empty stay as they are", func(t *testing.T) {
		tab := &Table{}
		if m := tab.Map(nil); m != nil {
			t.Errorf("nil became %v", m)
		}
		if m := tab.Map(map[string]string{}); m == nil || len(m) != 0 {
			t.Errorf("an empty map became %v", m)
		}
		if n := tab.Maps(); n != 0 {
			t.Errorf("the table holds %d maps after nil and empty ones", n)
		}
	})
}

func TestMapTableStaysBoundedAndKeepsWhatIsUsed(t *testing.T) {
	tab := &Table{}
	hot := tab.Map(labels("app.kubernetes.io/name", "web"))
	for i := range 3 * MapGeneration {
		tab.Map(labels("app.kubernetes.io/instance", fmt.Sprintf("web-%d", i)))
		if i%500 == 0 {
			if got := tab.Map(labels("app.kubernetes.io/name", "web")); !sameMap(got, hot) {
				t.Fatalf("after %d maps a map in use was copied anew", i)
			}
		}
	}
	if n := tab.Maps(); n > 2*MapGeneration {
		t.Errorf("the table holds %d maps, more than two generations (%d)", n, 2*MapGeneration)
	}
	if hot["app.kubernetes.io/name"] != "web" || len(hot) != 1 {
		t.Errorf("a map forgotten by the table changed: %v", hot)
	}
}

// TestForgetDropsOnlyTheMapEqualToIt: a forgotten map is no longer handed
// out (an equal map asked for afterwards is kept as itself), in either
// generation, and the table's other maps stay shared.
func TestForgetDropsOnlyTheMapEqualToIt(t *testing.T) {
	for _, aged := range []bool{false, true} {
		tab := &Table{}
		stale := tab.Map(labels("name", "web", "status", "pending-install"))
		other := tab.Map(labels("name", "web", "status", "deployed"))
		if aged { // both in the older generation
			for i := range MapGeneration {
				tab.Map(labels("filler", fmt.Sprint(i)))
			}
		}
		tab.Forget(labels("name", "web", "status", "pending-install", "version", "1")) // not equal: nothing
		tab.Forget(labels("name", "web", "status", "pending-install"))
		tab.Forget(nil)
		again := labels("name", "web", "status", "pending-install")
		if got := tab.Map(again); sameMap(got, stale) || !sameMap(got, again) {
			t.Errorf("aged %v: a forgotten map was handed out again", aged)
		}
		if got := tab.Map(labels("name", "web", "status", "deployed")); !sameMap(got, other) {
			t.Errorf("aged %v: forgetting one map dropped another", aged)
		}
	}
}

// TestMetaSharesEqualLabelMaps: the metadata of a release's objects, kept
// by the caches, holds one labels map and one annotations map, not one
// each (what the objects of one release have in common).
func TestMetaSharesEqualLabelMaps(t *testing.T) {
	tab := &Table{}
	object := func(name string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: fresh(name), Namespace: fresh("team-a"),
			Labels:      labels("app.kubernetes.io/name", "bench", "app.kubernetes.io/instance", "bench-0001"),
			Annotations: labels("meta.helm.sh/release-name", "bench-0001", "meta.helm.sh/release-namespace", "team-a"),
		}}
	}
	deploy, svc, other := object("bench-0001"), object("bench-0001-svc"), object("bench-0002")
	other.Labels["app.kubernetes.io/instance"] = "bench-0002"
	for _, o := range []*metav1.PartialObjectMetadata{deploy, svc, other} {
		tab.Meta(o)
	}
	if !sameMap(deploy.Labels, svc.Labels) || !sameMap(deploy.Annotations, svc.Annotations) {
		t.Error("two objects with equal labels and annotations hold a map each")
	}
	if sameMap(deploy.Labels, other.Labels) || other.Labels["app.kubernetes.io/instance"] != "bench-0002" {
		t.Errorf("another release's labels were taken for these: %v", other.Labels)
	}
}
