package manifests

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// CRD returns the CustomResourceDefinition of a watched kind. Its spec is
// the chart's values: any object (a schema derived from the chart comes
// with chart packaging); its status is chartkeeper's, fully typed.
func CRD(w watches.Watch) *apiextv1.CustomResourceDefinition {
	plural := Plural(w.Kind)
	return &apiextv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + w.Group},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: w.Group,
			Names: apiextv1.CustomResourceDefinitionNames{
				Kind: w.Kind, ListKind: w.Kind + "List", Plural: plural, Singular: lower(w.Kind),
				Categories: []string{"chartkeeper"},
			},
			Scope: apiextv1.NamespaceScoped,
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: w.Version, Served: true, Storage: true,
				Subresources:             &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: printerColumns(),
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type:        "object",
					Description: w.Kind + " is released with the Helm chart " + w.Chart.Metadata.Name + " by chartkeeper; its spec holds the chart's values.",
					Properties: map[string]apiextv1.JSONSchemaProps{
						"apiVersion": {Type: "string"},
						"kind":       {Type: "string"},
						"metadata":   {Type: "object"},
						"spec": {Type: "object", Description: "Values of the chart " + w.Chart.Metadata.Name + ".",
							XPreserveUnknownFields: ptr.To(true)},
						"status": StatusSchema(),
					},
				}},
			}},
		},
	}
}

func printerColumns() []apiextv1.CustomResourceColumnDefinition {
	return []apiextv1.CustomResourceColumnDefinition{
		{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
		{Name: "Revision", Type: "integer", JSONPath: ".status.release.revision"},
		{Name: "Chart", Type: "string", JSONPath: ".status.release.chart"},
		{Name: "Version", Type: "string", JSONPath: ".status.release.version", Priority: 1},
		{Name: "Status", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].message`, Priority: 1},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
