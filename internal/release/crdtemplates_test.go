package release

import (
	"strings"
	"testing"
)

// A templated CRD differs from the defaults' by its fields, Helm's
// resource-policy annotation (meaningless on a CRD the CRD step applies)
// left out.
func TestCRDDifference(t *testing.T) {
	const name = "widgets.example.com"
	keep := crdObject(t, name, "integer")
	keep.SetAnnotations(map[string]string{resourcePolicyAnnotation: "keep"})
	labelled := crdObject(t, name, "integer")
	labelled.SetLabels(map[string]string{"tenant": "a"})
	for _, tc := range []struct {
		name string
		got  []string
	}{
		{"same", crdDifference(crdObject(t, name, "integer"), crdObject(t, name, "integer"))},
		{"resource-policy only", crdDifference(keep, crdObject(t, name, "integer"))},
		{"a label", crdDifference(labelled, crdObject(t, name, "integer"))},
		{"a type", crdDifference(crdObject(t, name, "string"), crdObject(t, name, "integer"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := map[string]string{"same": "", "resource-policy only": "", "a label": "/metadata/labels",
				"a type": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/size/type"}[tc.name]
			if got := strings.Join(tc.got, ","); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
	msg := (&CRDTemplateError{CRD: name}).Error()
	if !strings.Contains(msg, name) || !strings.Contains(msg, "may not create a CRD") {
		t.Errorf("the refusal of a CRD only the values render: %s", msg)
	}
}
