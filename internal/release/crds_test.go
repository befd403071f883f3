package release

import (
	"errors"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

func crdObject(t *testing.T, name, sizeType string, versions ...string) *unstructured.Unstructured {
	t.Helper()
	if len(versions) == 0 {
		versions = []string{"v1"}
	}
	var vs []any
	for _, v := range versions {
		vs = append(vs, map[string]any{"name": v, "served": true, "storage": v == versions[0], "schema": map[string]any{"openAPIV3Schema": map[string]any{
			"type": "object", "properties": map[string]any{"spec": map[string]any{"type": "object", "properties": map[string]any{"size": map[string]any{"type": sizeType}}}}}}})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": name, "resourceVersion": "7"},
		"spec":     map[string]any{"group": "example.com", "scope": "Namespaced", "names": map[string]any{"kind": "Widget", "plural": "widgets"}, "versions": vs},
	}}
}

// planCRDs: what each policy writes, and the refusal of a breaking CRD
// (nothing written at all).
func TestPlanCRDs(t *testing.T) {
	const name = "widgets.example.com"
	for _, tc := range []struct {
		name, policy    string
		want            *unstructured.Unstructured
		have            *unstructured.Unstructured
		create, replace int
		refused         string
	}{
		{name: "skip writes nothing", policy: watches.CRDPolicySkip, want: crdObject(t, name, "integer")},
		{name: "create creates a missing CRD", policy: watches.CRDPolicyCreate, want: crdObject(t, name, "integer"), create: 1},
		{name: "create leaves an existing CRD, even a breaking one", policy: watches.CRDPolicyCreate, want: crdObject(t, name, "string"), have: crdObject(t, name, "integer")},
		{name: "create-and-replace creates a missing CRD", policy: watches.CRDPolicyCreateAndReplace, want: crdObject(t, name, "integer"), create: 1},
		{name: "create-and-replace replaces a compatible CRD", policy: watches.CRDPolicyCreateAndReplace, want: crdObject(t, name, "integer", "v1", "v2"), have: crdObject(t, name, "integer"), replace: 1},
		{name: "create-and-replace leaves a CRD written from the same definition", policy: watches.CRDPolicyCreateAndReplace,
			want: withDigest(crdObject(t, name, "integer", "v1", "v2"), "d1"), have: withDigest(crdObject(t, name, "integer"), "d1")},
		{name: "create-and-replace replaces a CRD written from another definition", policy: watches.CRDPolicyCreateAndReplace,
			want: withDigest(crdObject(t, name, "integer", "v1", "v2"), "d2"), have: withDigest(crdObject(t, name, "integer"), "d1"), replace: 1},
		{name: "create-and-replace refuses a type change", policy: watches.CRDPolicyCreateAndReplace, want: crdObject(t, name, "string"), have: crdObject(t, name, "integer"),
			refused: "CRD widgets.example.com: the chart's definition would break custom resources the cluster holds: version v1: spec.size: type changed from integer to string"},
		{name: "create-and-replace refuses a removed version", policy: watches.CRDPolicyCreateAndReplace, want: crdObject(t, name, "integer", "v2"), have: crdObject(t, name, "integer", "v1"),
			refused: "version v1: versions: version v1 is no longer served"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have := map[string]*unstructured.Unstructured{name: tc.have}
			p, err := planCRDs(tc.policy, []*unstructured.Unstructured{tc.want}, have, nil)
			if tc.refused != "" {
				var re *CRDRefusedError
				if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("got %v, want a refusal saying %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.create) != tc.create || len(p.replace) != tc.replace {
				t.Errorf("create %d replace %d, want %d and %d", len(p.create), len(p.replace), tc.create, tc.replace)
			}
			for _, r := range p.replace {
				if r.old != tc.have || r.want != tc.want {
					t.Errorf("a replacement of %v by %v, want %v by %v", r.old, r.want, tc.have, tc.want)
				}
			}
		})
	}
}

// chartCRDs reads crds/ and takes the templated CRDs alike, labels them
// with the chart, and refuses what is not a CRD.
func TestChartCRDs(t *testing.T) {
	file := func(objs ...*unstructured.Unstructured) *chart.File {
		var docs []string
		for _, o := range objs {
			b, err := yaml.Marshal(o.Object)
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, string(b))
		}
		return &chart.File{Name: "crds/all.yaml", Data: []byte(strings.Join(docs, "---\n"))}
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}}}
	for _, tc := range []struct {
		name      string
		files     []*chart.File
		templated []*unstructured.Unstructured
		want      string
		err       string
	}{
		{name: "none"},
		{name: "crds/ and templates", files: []*chart.File{file(crdObject(t, "b.example.com", "integer"), crdObject(t, "c.example.com", "integer"))},
			templated: []*unstructured.Unstructured{crdObject(t, "a.example.com", "integer")}, want: "a.example.com,b.example.com,c.example.com"},
		{name: "not a CRD", files: []*chart.File{file(cm)}, err: "ships v1 ConfigMap x among its CRDs"},
		{name: "twice", files: []*chart.File{file(crdObject(t, "a.example.com", "integer"))}, templated: []*unstructured.Unstructured{crdObject(t, "a.example.com", "integer")}, err: "ships CRD a.example.com twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := &chart.Chart{Metadata: &chart.Metadata{Name: "widgets", Version: "1.2.3"}, Files: tc.files}
			got, err := chartCRDs(ch, tc.templated)
			if tc.err != "" {
				var ce *ChartError
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want a ChartError saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, u := range got {
				names = append(names, u.GetName())
				if u.GetLabels()[api.LabelCRDChart] != "widgets" || u.GetAnnotations()[api.AnnotationCRDChartVersion] != "1.2.3" {
					t.Errorf("%s is not labelled with the chart: %v %v", u.GetName(), u.GetLabels(), u.GetAnnotations())
				}
			}
			if strings.Join(names, ",") != tc.want {
				t.Errorf("got %v, want %s", names, tc.want)
			}
		})
	}
}

func withDigest(u *unstructured.Unstructured, digest string) *unstructured.Unstructured {
	u.SetAnnotations(map[string]string{api.AnnotationCRDDigest: digest})
	return u
}
