package helm

import (
	"testing"

	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"
)

func TestWithoutCRDs(t *testing.T) {
	info := func(apiVersion, kind, name string) *resource.Info {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetName(name)
		return &resource.Info{Name: name, Object: u}
	}
	for _, tc := range []struct {
		name string
		in   kube.ResourceList
		want []string
	}{
		{"empty", nil, nil},
		{"no CRD", kube.ResourceList{info("v1", "ConfigMap", "cm")}, []string{"cm"}},
		{"CRDs left out", kube.ResourceList{info("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com"), info("apps/v1", "Deployment", "d"),
			info("example.com/v1", "CustomResourceDefinition", "not-apiextensions")}, []string{"d", "not-apiextensions"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, i := range withoutCRDs(tc.in) {
				got = append(got, i.Name)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}
