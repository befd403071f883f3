package crdschema

import (
	"fmt"
	"slices"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// CRDChange is a change of a CRD that can break custom resources the
// cluster holds: in a version (Version), or of the whole CRD (Version "").
type CRDChange struct {
	Version string
	Change
}

func (c CRDChange) String() string {
	if c.Version == "" {
		return c.Change.String()
	}
	return "version " + c.Version + ": " + c.Change.String()
}

// BreakingCRD lists what replacing old by new would break, in a fixed
// order: a changed scope, a version old serves or has stored
// (status.storedVersions) that new does not serve, and, for each version
// both hold, Breaking over its whole schema (paths as in a custom
// resource: "spec.image.tag") and the x-kubernetes-validations rules new
// adds; then a conversion change that breaks reading them in another
// version (conversionChanges). A version without a schema keeps any field.
// It is the one safe-upgrade check: generated CRDs (internal/manifests)
// and the CRDs charts ship (the crds policy) both go through it.
func BreakingCRD(old, new *apiextv1.CustomResourceDefinition) []CRDChange {
	var out []CRDChange
	if old.Spec.Scope != new.Spec.Scope {
		out = append(out, CRDChange{Change: Change{Path: "scope", Detail: fmt.Sprintf("changed from %s to %s", old.Spec.Scope, new.Spec.Scope)}})
	}
	served := map[string]apiextv1.CustomResourceDefinitionVersion{}
	for _, v := range new.Spec.Versions {
		if v.Served {
			served[v.Name] = v
		}
	}
	var gone []string
	for _, v := range old.Spec.Versions {
		if _, ok := served[v.Name]; !ok && v.Served {
			gone = append(gone, v.Name)
		}
	}
	for _, name := range old.Status.StoredVersions {
		if _, ok := served[name]; !ok && !slices.Contains(gone, name) {
			gone = append(gone, name)
		}
	}
	for _, name := range gone {
		out = append(out, CRDChange{Version: name, Change: Change{Path: "versions", Detail: "version " + name + " is no longer served (custom resources are stored in it)"}})
	}
	for _, ov := range old.Spec.Versions {
		nv, ok := served[ov.Name]
		if !ok {
			continue
		}
		for _, c := range Breaking("", rootOf(ov), rootOf(nv)) {
			c.Path = strings.TrimPrefix(c.Path, ".")
			if c.Path == "" {
				c.Path = "(root)"
			}
			out = append(out, CRDChange{Version: ov.Name, Change: c})
		}
		var rules []Change
		or, nr := rootOf(ov), rootOf(nv)
		newRules("", &or, &nr, &rules)
		for _, c := range rules {
			out = append(out, CRDChange{Version: ov.Name, Change: c})
		}
	}
	return append(out, conversionChanges(old, new)...)
}

func rootOf(v apiextv1.CustomResourceDefinitionVersion) apiextv1.JSONSchemaProps {
	if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		keep := true
		return apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: &keep}
	}
	return *v.Schema.OpenAPIV3Schema
}
