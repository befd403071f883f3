package ownership

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

func TestPostRendererMarksObjects(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}, meta.RESTScopeRoot)
	owner := Owner{GVK: schema.GroupVersionKind{Group: "apps.chartkeeper.dev", Version: "v1alpha1", Kind: "WebApp"}, Namespace: "team", Name: "web", UID: "uid-1"}
	in := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: here
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: elsewhere
  namespace: other
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: kept
  annotations:
    helm.sh/resource-policy: " Keep "
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: not-kept
  annotations:
    helm.sh/resource-policy: delete
---
# only a comment
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cluster-wide
---
apiVersion: example.com/v1
kind: Unknown
metadata:
  name: unmapped
`
	out, err := PostRenderer{Owner: owner, ReleaseNamespace: "team", Mapper: mapper}.Run(bytes.NewBufferString(in))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(strings.TrimPrefix(out.String(), "---\n"), "---\n")
	if len(docs) != 6 {
		t.Fatalf("want 6 objects, got %d:\n%s", len(docs), out)
	}
	wantRef := map[string]bool{"here": true, "kept": false, "not-kept": true, "elsewhere": false, "cluster-wide": false, "unmapped": false}
	for _, d := range docs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		u := unstructured.Unstructured{Object: m}
		if u.GetLabels()[api.LabelManaged] != "true" || u.GetAnnotations()[api.AnnotationOwner] != "apps.chartkeeper.dev/WebApp/team/web" {
			t.Errorf("%s not marked: %v %v", u.GetName(), u.GetLabels(), u.GetAnnotations())
		}
		refs := u.GetOwnerReferences()
		if got := len(refs) == 1 && refs[0].UID == "uid-1" && *refs[0].Controller; got != wantRef[u.GetName()] {
			t.Errorf("%s: ownerReference %v, want %v", u.GetName(), refs, wantRef[u.GetName()])
		}
	}
}

func TestPostRendererRejectsLists(t *testing.T) {
	in := "apiVersion: v1\nkind: List\nitems: []\n"
	if _, err := (PostRenderer{}).Run(bytes.NewBufferString(in)); err == nil {
		t.Error("a List is not an error")
	}
	if _, err := (PostRenderer{}).Run(bytes.NewBufferString("a: [\n")); err == nil {
		t.Error("invalid YAML is not an error")
	}
}

func TestOwnerKeyRoundTrip(t *testing.T) {
	o := Owner{GVK: schema.GroupVersionKind{Group: "g.example", Version: "v1", Kind: "K"}, Namespace: "ns", Name: "n"}
	gk, nn, ok := ParseKey(o.Key())
	if !ok || gk != (schema.GroupKind{Group: "g.example", Kind: "K"}) || nn.Namespace != "ns" || nn.Name != "n" {
		t.Errorf("round trip: %v %v %v", gk, nn, ok)
	}
	for _, bad := range []string{"", "a/b/c", "g/K/ns/", "g//ns/n"} {
		if _, _, ok := ParseKey(bad); ok {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
}

func TestKept(t *testing.T) {
	for _, tc := range []struct {
		ann  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"other": "keep"}, false},
		{map[string]string{ResourcePolicyAnnotation: "keep"}, true},
		{map[string]string{ResourcePolicyAnnotation: " KEEP\n"}, true},
		{map[string]string{ResourcePolicyAnnotation: "delete"}, false},
		{map[string]string{ResourcePolicyAnnotation: ""}, false},
	} {
		if got := Kept(tc.ann); got != tc.want {
			t.Errorf("Kept(%v) = %v, want %v", tc.ann, got, tc.want)
		}
	}
}

func TestPostRendererHandsCRDsOver(t *testing.T) {
	const crd = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n"
	const cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n"
	tests := []struct {
		name      string
		in        string
		hook      bool
		wantCRDs  []string
		wantInOut bool // the CRD stays in the manifest
	}{
		{name: "no hook: the CRD stays", in: crd + "---\n" + cm, wantInOut: true},
		{name: "hook: the CRD is handed over", in: crd + "---\n" + cm, hook: true, wantCRDs: []string{"widgets.example.com"}},
		{name: "hook without CRDs is called with none", in: cm, hook: true, wantCRDs: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			called := false
			p := PostRenderer{Owner: Owner{Name: "x"}, ReleaseNamespace: "ns"}
			if tt.hook {
				p.CRDs = func(crds []*unstructured.Unstructured) error {
					called = true
					got = []string{}
					for _, c := range crds {
						got = append(got, c.GetName())
					}
					return nil
				}
			}
			out, err := p.Run(bytes.NewBufferString(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if tt.hook && (!called || strings.Join(got, ",") != strings.Join(tt.wantCRDs, ",")) {
				t.Errorf("hook called %v with %v, want %v", called, got, tt.wantCRDs)
			}
			if in := strings.Contains(out.String(), "CustomResourceDefinition"); in != tt.wantInOut {
				t.Errorf("CRD in the manifest: %v, want %v:\n%s", in, tt.wantInOut, out)
			}
			if !strings.Contains(out.String(), "ConfigMap") {
				t.Errorf("the ConfigMap is lost:\n%s", out)
			}
		})
	}
}
