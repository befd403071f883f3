package release

import (
	"fmt"
	"slices"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

func configMap(name string, data map[string]any, rv string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "resourceVersion": rv, "managedFields": []any{map[string]any{"manager": rv}}},
		"data":     data}}
}

// A plan names changed fields, never values, and lists every change of a
// big release up to maxPlanEntries, counting the rest.
func TestPlanStatusNamesFieldsAndIsBounded(t *testing.T) {
	w := watches.Watch{Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "big", Version: "1.0.0"}}}
	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	var chs []helm.Change
	for i := range 150 {
		name := fmt.Sprintf("cm-%03d", i)
		chs = append(chs, helm.Change{Action: helm.ChangeUpdate, GVK: cmGVK, Namespace: "apps", Name: name,
			Before: configMap(name, map[string]any{"k": "old-secretish", "same": "x"}, "1"),
			After:  configMap(name, map[string]any{"k": "new-secretish", "same": "x", "added": "y"}, "2")})
	}
	chs = append(chs, helm.Change{Action: helm.ChangeCreate, GVK: cmGVK, Namespace: "apps", Name: "fresh"})
	p := planStatus(&helm.Plan{From: 3, Changes: chs}, "d1", w)
	if p.Digest != "d1" || p.FromRevision != 3 || p.Chart != "big-1.0.0" {
		t.Errorf("plan header %+v", p)
	}
	first := p.Update[0]
	if !slices.Equal(first.Fields, []string{"/data/added", "/data/k"}) {
		t.Errorf("fields %v, want /data/added and /data/k (no metadata every write changes)", first.Fields)
	}
	listed := len(p.Create)
	for _, o := range p.Update {
		listed += 1 + len(o.Fields)
	}
	if listed > maxPlanEntries {
		t.Errorf("listed %d entries, omitted %d: want at most %d listed and the rest counted", listed, p.Omitted, maxPlanEntries)
	}
	if p.Omitted != 150*3+1-listed {
		t.Errorf("omitted %d, want %d", p.Omitted, 150*3+1-listed)
	}
}

// A plan's digest changes with everything the upgrade is made from and
// for: the desired values, the revision, the resource's UID, the release,
// the account, and the annotations that change the upgrade; and with the
// planned changes, whatever their order.
func TestPlanDigestBindsWhatWasShown(t *testing.T) {
	obj := func(uid string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetUID(types.UID(uid))
		return u
	}
	base := desired{digest: "values", ref: watches.ReleaseRef{Name: "db", Namespace: "staging"}}
	ref := planInputs(obj("u1"), base, steering{}, 1)
	variants := map[string]string{
		"values":      planInputs(obj("u1"), desired{digest: "other", ref: base.ref}, steering{}, 1),
		"revision":    planInputs(obj("u1"), base, steering{}, 2),
		"resource":    planInputs(obj("u2"), base, steering{}, 1),
		"namespace":   planInputs(obj("u1"), desired{digest: "values", ref: watches.ReleaseRef{Name: "db", Namespace: "production"}}, steering{}, 1),
		"name":        planInputs(obj("u1"), desired{digest: "values", ref: watches.ReleaseRef{Name: "db2", Namespace: "staging"}}, steering{}, 1),
		"account":     planInputs(obj("u1"), desired{digest: "values", ref: base.ref, account: watches.ServiceAccountRef{Namespace: "staging", Name: "deployer"}}, steering{}, 1),
		"force":       planInputs(obj("u1"), base, steering{upgradeForce: true}, 1),
		"no hooks":    planInputs(obj("u1"), base, steering{upgradeDisableHooks: true}, 1),
		"description": planInputs(obj("u1"), base, steering{upgradeDescription: "x"}, 1),
	}
	for what, in := range variants {
		if in == ref {
			t.Errorf("another %s makes the same plan inputs %s", what, in)
		}
	}
	if again := planInputs(obj("u1"), base, steering{uninstallDisableHooks: true, rollbackForce: true}, 1); again != ref {
		t.Errorf("annotations that do not change the upgrade change its plan: %s, %s", again, ref)
	}

	cmGVK := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	a := helm.Change{Action: helm.ChangeCreate, GVK: cmGVK, Namespace: "apps", Name: "a"}
	b := helm.Change{Action: helm.ChangeUpdate, GVK: cmGVK, Namespace: "apps", Name: "b",
		Before: configMap("b", map[string]any{"k": "1"}, "1"), After: configMap("b", map[string]any{"k": "2"}, "2")}
	d := planDigest(ref, []helm.Change{a, b})
	if !planMadeFor(d, ref) || planMadeFor(d, variants["resource"]) {
		t.Errorf("plan %s made for %s: %v; for %s: %v", d, ref, planMadeFor(d, ref), variants["resource"], planMadeFor(d, variants["resource"]))
	}
	if planDigest(ref, []helm.Change{b, a}) != d {
		t.Error("the order of the changes changes the digest")
	}
	if planDigest(ref, []helm.Change{a}) == d {
		t.Error("another set of changes makes the same digest")
	}
	if planMadeFor(ref, ref) {
		t.Error("a bare inputs key passes for a plan")
	}
}
