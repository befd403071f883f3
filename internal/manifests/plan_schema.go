package manifests

import apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

// planSchema is the OpenAPI schema of api.PlanStatus.
func planSchema() apiextv1.JSONSchemaProps {
	object := apiextv1.JSONSchemaProps{
		Type:     "object",
		Required: []string{"apiVersion", "kind", "name"},
		Properties: map[string]apiextv1.JSONSchemaProps{
			"apiVersion": str("API version of the object."),
			"kind":       str("Kind of the object."),
			"namespace":  str("Namespace of the object (empty: cluster-scoped)."),
			"name":       str("Name of the object."),
			"fields": {Type: "array", Description: "Changed fields, as JSON pointers.",
				Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "string"}}},
		},
	}
	list := func(desc string) apiextv1.JSONSchemaProps {
		return apiextv1.JSONSchemaProps{Type: "array", Description: desc, Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &object}}
	}
	return apiextv1.JSONSchemaProps{
		Type:        "object",
		Description: "The upgrade awaiting approval (upgrade.approval: manual): what dry runs against the live objects answered. Objects and fields, never values.",
		Required:    []string{"digest", "fromRevision"},
		Properties: map[string]apiextv1.JSONSchemaProps{
			"digest":       str("Digest of the plan; approve it with the annotation chartkeeper.dev/approve."),
			"fromRevision": integer("Revision the upgrade starts from."),
			"chart":        str("Chart name and version the upgrade would release."),
			"create":       list("Objects the upgrade would create."),
			"update":       list("Objects the upgrade would change, with the changed fields."),
			"delete":       list("Objects the upgrade would delete."),
			"keep":         list("Objects the chart drops but helm.sh/resource-policy: keep leaves in place."),
			"omitted":      integer("Objects or fields left out to keep the status small; chartkeeper diff prints them all."),
		},
	}
}
