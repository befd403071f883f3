package bench

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/chartkeeper/chartkeeper/internal/crdschema"
)

func TestParseSizes(t *testing.T) {
	for in, want := range map[string][]int{
		"":                {100},
		"  ":              {100},
		"200":             {200},
		"100,500,1000":    {100, 500, 1000},
		" 1000 , 100 ":    {1000, 100},
		"100,500,1000,50": {100, 500, 1000, 50},
	} {
		got, err := ParseSizes(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseSizes(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-5", "x", "100,", ",100", "100,,500", "100;500", "1.5", "100,100"} {
		if got, err := ParseSizes(in); err == nil || !strings.Contains(err.Error(), "BENCH_N=") {
			t.Errorf("ParseSizes(%q) = %v, %v; want an error naming BENCH_N", in, got, err)
		}
	}
}

func TestLookupScenario(t *testing.T) {
	for in, want := range map[string]string{"": "default", "default": "default", "podinfo": "podinfo"} {
		if sc, err := LookupScenario(in); err != nil || sc.Name != want {
			t.Errorf("LookupScenario(%q) = %q, %v; want %q", in, sc.Name, err, want)
		}
	}
	if _, err := LookupScenario("Podinfo"); err == nil || !strings.Contains(err.Error(), "known: default, podinfo") {
		t.Errorf("an unknown scenario: %v", err)
	}
}

func TestMergePatch(t *testing.T) {
	for _, c := range []struct{ name, doc, patch, want string }{
		{"replace a value", `{"message":"v1","replicas":1}`, `{"message":"v2"}`, `{"message":"v2","replicas":1}`},
		{"merge nested objects", `{"ui":{"message":"v1","color":"red"},"replicaCount":0}`, `{"ui":{"message":"v2"}}`, `{"replicaCount":0,"ui":{"color":"red","message":"v2"}}`},
		{"null deletes", `{"a":1,"b":2}`, `{"a":null}`, `{"b":2}`},
		{"an object replaces a value", `{"a":1}`, `{"a":{"b":{"c":null,"d":1}}}`, `{"a":{"b":{"d":1}}}`},
		{"a list replaces a list", `{"a":[1,2]}`, `{"a":[3]}`, `{"a":[3]}`},
	} {
		var doc, patch map[string]any
		if err := json.Unmarshal([]byte(c.doc), &doc); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(c.patch), &patch); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(mergePatch(doc, patch))
		if string(got) != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// rendered renders both revisions of one release of the scenario's chart
// with the Helm SDK, as the floor does before the clock starts.
func rendered(t *testing.T, sc Scenario) (v1, v2 []*unstructured.Unstructured) {
	t.Helper()
	ch, err := loader.Load(filepath.Join("..", "..", sc.Chart))
	if err != nil {
		t.Fatal(err)
	}
	k := key{Namespace: "bench-podinfo-000", Name: "bench-0000"}
	rels, err := renderReleases(ch, sc, []key{k})
	if err != nil {
		t.Fatal(err)
	}
	if v1, err = objects(rels[k][0]); err != nil {
		t.Fatal(err)
	}
	if v2, err = objects(rels[k][1]); err != nil {
		t.Fatal(err)
	}
	return v1, v2
}

func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, u := range objs {
		out = append(out, u.GetAPIVersion()+" "+u.GetKind())
	}
	slices.Sort(out)
	return out
}

func TestScenarioChartsRenderWhatTheObserverWatches(t *testing.T) {
	for _, c := range []struct {
		scenario string
		kinds    []string
		replicas int64
		// changed are the kinds whose objects the upgrade changes.
		changed []string
	}{
		{"default", []string{"apps/v1 Deployment", "v1 ConfigMap", "v1 Service"}, 1, []string{"ConfigMap", "Deployment"}},
		{"podinfo", []string{"apps/v1 Deployment", "networking.k8s.io/v1 Ingress", "v1 Service", "v1 ServiceAccount"}, 0, []string{"Deployment"}},
	} {
		sc, err := LookupScenario(c.scenario)
		if err != nil {
			t.Fatal(err)
		}
		v1, v2 := rendered(t, sc)
		if got := kinds(v1); !slices.Equal(got, c.kinds) {
			t.Errorf("%s renders %v, want exactly %v", c.scenario, got, c.kinds)
		}
		if got := kinds(v2); !slices.Equal(got, c.kinds) {
			t.Errorf("%s revision 2 renders %v, want exactly %v", c.scenario, got, c.kinds)
		}
		sel, err := labels.Parse(sc.Selector)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range v1 {
			if !sel.Matches(labels.Set(u.GetLabels())) || u.GetLabels()[releaseLabel] != "bench-0000" || u.GetNamespace() != "bench-podinfo-000" {
				t.Errorf("%s: %s %s is not seen by the observer: labels %v, namespace %q", c.scenario, u.GetKind(), u.GetName(), u.GetLabels(), u.GetNamespace())
			}
		}
		// Between revisions only what carries the message changes: the
		// floor patches just those.
		var changed []string
		before := map[string]*unstructured.Unstructured{}
		for _, u := range v1 {
			before[objectID(u)] = u
		}
		for _, u := range v2 {
			if b := before[objectID(u)]; b == nil || !equalJSON(b.Object, u.Object) {
				changed = append(changed, u.GetKind())
			}
		}
		slices.Sort(changed)
		for rev, objs := range map[string][]*unstructured.Unstructured{messageV1: v1, messageV2: v2} {
			for _, d := range objs {
				if d.GetKind() != "Deployment" {
					continue
				}
				replicas, _, _ := unstructured.NestedFieldNoCopy(d.Object, "spec", "replicas")
				msg, _, _ := unstructured.NestedString(d.Object, "spec", "template", "metadata", "annotations", messageAnnotation)
				if fmt.Sprint(replicas) != fmt.Sprint(c.replicas) || msg != rev {
					t.Errorf("%s Deployment of %s: replicas %v, message %q; want %d, %q", c.scenario, rev, replicas, msg, c.replicas, rev)
				}
			}
		}
		if !slices.Equal(changed, c.changed) {
			t.Errorf("%s: the upgrade changes %v, want %v", c.scenario, changed, c.changed)
		}
	}
}

func TestScenarioSpecsAreAdmittedByTheBenchCRD(t *testing.T) {
	for _, sc := range scenarios {
		chart, err := filepath.Abs(filepath.Join("..", "..", sc.Chart))
		if err != nil {
			t.Fatal(err)
		}
		_, w, err := writeWatches(t.TempDir(), chart, sc.gvk(), 3)
		if err != nil {
			t.Fatal(err)
		}
		crd, err := benchCRD(w)
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		if crd.Spec.Names.Kind != sc.Kind || crd.Spec.Group != benchGroup {
			t.Errorf("%s: CRD for %s.%s", sc.Name, crd.Spec.Names.Kind, crd.Spec.Group)
		}
		v1, v2 := sc.values()
		for rev, spec := range map[string]map[string]any{messageV1: v1, messageV2: v2} {
			cr, err := json.Marshal(map[string]any{
				"apiVersion": benchGroup + "/" + benchVersion, "kind": sc.Kind,
				"metadata": map[string]any{"name": "bench-0000"}, "spec": spec,
			})
			if err != nil {
				t.Fatal(err)
			}
			// Strict: a field the CRD would prune would never reach the chart.
			if err := crdschema.Admit(crd, cr); err != nil {
				t.Errorf("%s %s spec %s: %v", sc.Name, rev, cr, err)
			}
		}
	}
}
