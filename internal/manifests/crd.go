package manifests

import (
	"fmt"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/crdschema"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// CRDOptions tune CRD generation.
type CRDOptions struct {
	// AllowBreaking writes a schema that breaks existing custom resources
	// of the same version instead of refusing (BreakingError). Default
	// false: add a new version instead.
	AllowBreaking bool
}

// BreakingError is returned when a watch's version keeps its name but its
// new schema could fail custom resources that the old one accepted.
type BreakingError struct {
	CRD     string
	Version string
	Changes []crdschema.Change
}

func (e *BreakingError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CRD %s version %s: the chart's new values schema breaks existing custom resources:\n", e.CRD, e.Version)
	for _, c := range e.Changes {
		fmt.Fprintf(&b, "  %s\n", c)
	}
	b.WriteString("Serve the new schema as a new version (change the watch's version in watches.yaml; " +
		"the old version stays served with its schema), or accept the break with --allow-breaking.")
	return b.String()
}

// CRD returns the CustomResourceDefinition of a watched kind. Its spec
// schema comes from the chart (crdschema.FromChart); its status schema and
// printer columns are the engine's. old is the CRD generated before, or
// nil: its other versions stay served (not stored) with the schema they
// had, so one watch reads custom resources written in any of them; its
// version of the watch's name must not break (BreakingError). The
// warnings say what the API server will not check. An error also comes
// when the API server's own validation would refuse the result.
func CRD(w watches.Watch, old *apiextv1.CustomResourceDefinition, o CRDOptions) (*apiextv1.CustomResourceDefinition, []crdschema.Warning, error) {
	spec, warns, err := crdschema.FromChart(w.Chart)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", w, err)
	}
	plural := Plural(w.Kind)
	current := apiextv1.CustomResourceDefinitionVersion{
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
				"spec":       spec,
				"status":     statusSchemaOf(w),
			},
		}},
	}
	crd := &apiextv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + w.Group},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: w.Group,
			Names: apiextv1.CustomResourceDefinitionNames{
				Kind: w.Kind, ListKind: w.Kind + "List", Plural: plural, Singular: lower(w.Kind),
				Categories: []string{"chartkeeper"}, ShortNames: w.ShortNames,
			},
			Scope: apiextv1.NamespaceScoped,
		},
	}
	versions, err := mergeVersions(crd.Name, old, current, o)
	if err != nil {
		return nil, nil, err
	}
	crd.Spec.Versions = versions
	// The API server validates against the versions it has stored.
	check := crd.DeepCopy()
	for _, v := range versions {
		check.Status.StoredVersions = append(check.Status.StoredVersions, v.Name)
	}
	if err := crdschema.Validate(check); err != nil {
		return nil, nil, fmt.Errorf("%s: the generated CRD would be refused by the API server: %w", w, err)
	}
	return crd, warns, nil
}

// mergeVersions keeps old's versions (served, not stored) beside current,
// which replaces its namesake after the safe-upgrade check
// (crdschema.BreakingCRD: the spec of a version both hold may not break).
func mergeVersions(name string, old *apiextv1.CustomResourceDefinition, current apiextv1.CustomResourceDefinitionVersion, o CRDOptions) ([]apiextv1.CustomResourceDefinitionVersion, error) {
	if old == nil {
		return []apiextv1.CustomResourceDefinitionVersion{current}, nil
	}
	var out []apiextv1.CustomResourceDefinitionVersion
	replaced := false
	for _, v := range old.Spec.Versions {
		if v.Name != current.Name {
			v.Storage = false
			out = append(out, v)
			continue
		}
		out = append(out, current)
		replaced = true
	}
	if !replaced {
		out = append(out, current)
	}
	if o.AllowBreaking {
		return out, nil
	}
	// Only the spec is the chart's: the status schema is the engine's.
	candidate := &apiextv1.CustomResourceDefinition{Spec: old.Spec}
	candidate.Spec.Versions = out
	var berr *BreakingError
	for _, c := range crdschema.BreakingCRD(specsOf(old), specsOf(candidate)) {
		if berr == nil {
			berr = &BreakingError{CRD: name, Version: c.Version}
		}
		if c.Version == berr.Version {
			berr.Changes = append(berr.Changes, c.Change)
		}
	}
	if berr != nil {
		return nil, berr
	}
	return out, nil
}

// specsOf is crd with each version's schema cut down to its spec.
func specsOf(crd *apiextv1.CustomResourceDefinition) *apiextv1.CustomResourceDefinition {
	out := crd.DeepCopy()
	for i, v := range out.Spec.Versions {
		spec := specOf(v)
		out.Spec.Versions[i].Schema = &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
			Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"spec": spec}}}
	}
	return out
}

func specOf(v apiextv1.CustomResourceDefinitionVersion) apiextv1.JSONSchemaProps {
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return apiextv1.JSONSchemaProps{XPreserveUnknownFields: ptrBool(true)}
	}
	return v.Schema.OpenAPIV3Schema.Properties["spec"]
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

func lower(s string) string { return strings.ToLower(s) }
