package crdschema

import (
	"fmt"
	"slices"
	"sort"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/chartkeeper/chartkeeper/internal/values"
)

// FromChart returns the structural schema of a custom resource's spec
// whose values feed ch: converted from the chart's values.schema.json, or
// inferred from its values.yaml when it has none. Each subchart's values
// (under its alias or name) and "global" are included when the parent's
// schema does not name them. The Warnings list what the API server will
// not check; an error means the chart's schema is not valid JSON or its
// values.yaml not valid YAML.
func FromChart(ch *chart.Chart) (apiextv1.JSONSchemaProps, []Warning, error) {
	defaults, err := chartutil.CoalesceValues(ch, map[string]any{})
	if err != nil {
		return apiextv1.JSONSchemaProps{}, nil, fmt.Errorf("chart %s: default values: %w", ch.Name(), err)
	}
	u := templateUsage(ch)
	var warns []Warning
	spec, err := chartSchema(ch, at{path: "spec", defaults: map[string]any(defaults)}, u, &warns)
	if err != nil {
		return apiextv1.JSONSchemaProps{}, nil, err
	}
	if spec.Description == "" {
		spec.Description = "Values of the Helm chart " + ch.Name() + "."
	}
	sort.Slice(warns, func(i, j int) bool { return warns[i].String() < warns[j].String() })
	return spec, warns, nil
}

func chartSchema(ch *chart.Chart, a at, u usage, warns *[]Warning) (apiextv1.JSONSchemaProps, error) {
	c := &converter{usage: u}
	var out apiextv1.JSONSchemaProps
	if len(ch.Schema) > 0 {
		root, err := decodeJSON(ch.Schema)
		if err != nil {
			return out, fmt.Errorf("chart %s: values.schema.json: %w", ch.Name(), err)
		}
		c.root, _ = root.(map[string]any)
		// values.yaml types the keys the schema leaves undeclared.
		if a.node, err = valuesNode(ch); err != nil {
			return out, fmt.Errorf("chart %s: %w", ch.Name(), err)
		}
		out = c.convert(root, a)
	} else {
		var data []byte
		for _, f := range ch.Raw {
			if f.Name == chartutil.ValuesfileName {
				data = f.Data
			}
		}
		var err error
		if out, err = c.inferValues(data, a); err != nil {
			return out, fmt.Errorf("chart %s: %w", ch.Name(), err)
		}
	}
	*warns = append(*warns, c.warns...)
	if out.Type != "object" {
		*warns = append(*warns, Warning{Path: a.path, Detail: "the chart's values are not an object; any object is accepted"})
		return apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTrue()}, nil
	}
	if out.Properties == nil {
		return out, nil // free-form: subcharts' values are taken as they are
	}
	for _, sub := range ch.Dependencies() {
		key := values.SubchartKey(ch, sub)
		if _, named := out.Properties[key]; named {
			continue
		}
		s, err := chartSchema(sub, a.child(key), u, warns)
		if err != nil {
			return out, err
		}
		s.Nullable = true
		if s.Description == "" {
			s.Description = "Values of the subchart " + sub.Name() + "."
		}
		out.Properties[key] = s
		// Helm checks an enabled subchart's values even when the parent's
		// have none for it: keys it requires make its own key required.
		if len(s.Required) > 0 && alwaysEnabled(ch, sub) && !slices.Contains(out.Required, key) {
			out.Required = append(out.Required, key)
			sort.Strings(out.Required)
		}
	}
	// A chart's templates reading .Values.global take it as Helm does:
	// shared with every subchart, any content.
	readsGlobal := a.values == "" && len(ch.Schema) == 0 && u.reads("global")
	if _, named := out.Properties["global"]; !named && (len(ch.Dependencies()) > 0 || readsGlobal) {
		out.Properties["global"] = apiextv1.JSONSchemaProps{Type: "object", Nullable: true,
			XPreserveUnknownFields: ptrTrue(), Description: "Values shared with every subchart."}
	}
	return out, nil
}

// alwaysEnabled reports whether a subchart has no condition or tags that
// could turn it off.
func alwaysEnabled(parent, sub *chart.Chart) bool {
	if parent.Metadata == nil {
		return true
	}
	for _, d := range parent.Metadata.Dependencies {
		if d.Name == sub.Name() && (d.Condition != "" || len(d.Tags) > 0) {
			return false
		}
	}
	return true
}
