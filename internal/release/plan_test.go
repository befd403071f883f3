package release

import (
	"fmt"
	"slices"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

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
