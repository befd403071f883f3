package crdschema

import (
	"encoding/json"
	"slices"
	"sort"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// object maps properties, required, additionalProperties and
// patternProperties. As in JSON Schema, an object takes keys beyond its
// properties unless additionalProperties is false: those keys are kept
// (x-kubernetes-preserve-unknown-fields), and the ones values.yaml shows
// are typed from it (addUndeclared).
func (c *converter) object(s map[string]any, out *apiextv1.JSONSchemaProps, a at) {
	props, _ := s["properties"].(map[string]any)
	extra := s["additionalProperties"]
	patterns, _ := s["patternProperties"].(map[string]any)
	closed := extra == false && len(patterns) == 0
	if len(props) > 0 {
		out.Properties = map[string]apiextv1.JSONSchemaProps{}
		for k, v := range props {
			p := c.convert(v, a.child(k))
			if !a.inList {
				p.Nullable = true // null removes a default, as in helm --set key=null
			}
			out.Properties[k] = p
		}
	}
	out.Required = c.required(s, a)
	out.MinProperties, out.MaxProperties = intPtr(s, "minProperties"), intPtr(s, "maxProperties")
	if closed {
		return
	}
	if e, ok := extra.(map[string]any); ok && len(e) > 0 && len(props) == 0 && len(patterns) == 0 {
		item := c.convert(e, a.mapValues())
		out.AdditionalProperties = &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &item}
		return
	}
	if extra == false && len(props) == 0 && len(patterns) == 1 {
		// Only keys matching one pattern: their values are typed, the
		// pattern itself is Helm's to check.
		for p, v := range patterns {
			item := c.convert(v, a.mapValues())
			out.AdditionalProperties = &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &item}
			c.warn(a, "patternProperties: key names matching %q are checked by Helm only", p)
		}
		return
	}
	switch {
	case len(patterns) > 0:
		c.warn(a, "patternProperties: keys by pattern are kept but checked by Helm only")
	case len(props) > 0 && extra != nil && extra != true:
		if m, ok := extra.(map[string]any); ok && len(m) > 0 {
			c.warn(a, "additionalProperties beside properties: extra keys are kept but checked by Helm only")
		}
	}
	out.XPreserveUnknownFields = ptrTrue()
	c.addUndeclared(out, a, c.alternativeKeys(s))
}

// alternativeKeys are the keys that anyOf/oneOf alternatives of s declare
// ($ref followed): the alternatives, checked by Helm only, may allow other
// types for them than their defaults have.
func (c *converter) alternativeKeys(s map[string]any) map[string]bool {
	keys := map[string]bool{}
	for _, m := range c.alternatives(s) {
		props, _ := m["properties"].(map[string]any)
		for name := range props {
			keys[name] = true
		}
	}
	return keys
}

// alternatives are the schemas of s's anyOf and oneOf, $ref followed (nil
// for one that is not an object).
func (c *converter) alternatives(s map[string]any) []map[string]any {
	var out []map[string]any
	for _, k := range []string{"anyOf", "oneOf"} {
		alts, _ := s[k].([]any)
		for _, alt := range alts {
			m, _ := alt.(map[string]any)
			if ref, ok := m["$ref"].(string); ok {
				t, _ := c.resolve(ref)
				m, _ = t.(map[string]any)
			}
			out = append(out, m)
		}
	}
	return out
}

// required keeps the required keys the chart has no default for: the
// custom resource's spec is merged over the chart's values, so a key
// with a default is never missing there.
func (c *converter) required(s map[string]any, a at) []string {
	req, _ := s["required"].([]any)
	defaults, _ := a.defaults.(map[string]any)
	var out []string
	for _, r := range req {
		k, ok := r.(string)
		if !ok {
			continue
		}
		if _, has := defaults[k]; has && !a.inList {
			continue
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// array maps items (a list of schemas, a tuple, is not expressible) and
// uniqueItems (as a set of scalars).
func (c *converter) array(s map[string]any, out *apiextv1.JSONSchemaProps, a at) {
	var item apiextv1.JSONSchemaProps
	switch it := s["items"].(type) {
	case map[string]any, bool:
		item = c.convert(it, a.items())
	case []any:
		c.warn(a, "tuple items are checked by Helm only")
		item = anyValue()
	default:
		item = anyValue()
	}
	out.Items = &apiextv1.JSONSchemaPropsOrArray{Schema: &item}
	out.MinItems, out.MaxItems = intPtr(s, "minItems"), intPtr(s, "maxItems")
	if s["uniqueItems"] == true {
		switch item.Type {
		case "string", "integer", "number", "boolean":
			out.XListType = strPtr("set")
		default:
			c.warn(a, "uniqueItems of non-scalar items is checked by Helm only")
		}
	}
}

// bounds maps minimum/maximum and both forms of exclusive bounds (draft-04
// booleans, draft-06+ numbers).
func (c *converter) bounds(s map[string]any, out *apiextv1.JSONSchemaProps) {
	if v, ok := num(s, "minimum"); ok {
		out.Minimum = &v
	}
	if v, ok := num(s, "maximum"); ok {
		out.Maximum = &v
	}
	switch e := s["exclusiveMinimum"].(type) {
	case bool:
		out.ExclusiveMinimum = e && out.Minimum != nil
	case json.Number:
		if v, _ := e.Float64(); out.Minimum == nil || v >= *out.Minimum {
			out.Minimum, out.ExclusiveMinimum = &v, true
		}
	}
	switch e := s["exclusiveMaximum"].(type) {
	case bool:
		out.ExclusiveMaximum = e && out.Maximum != nil
	case json.Number:
		if v, _ := e.Float64(); out.Maximum == nil || v <= *out.Maximum {
			out.Maximum, out.ExclusiveMaximum = &v, true
		}
	}
}

// enum maps enum and const. An enum that allows null is left to Helm:
// the API server checks an enum before nullable, so it would refuse null.
func (c *converter) enum(s map[string]any, out *apiextv1.JSONSchemaProps, a at) {
	vals, _ := s["enum"].([]any)
	if v, ok := s["const"]; ok {
		vals = []any{v}
	}
	if slices.Contains(vals, nil) {
		out.Nullable = true
		if len(vals) > 1 {
			c.warn(a, nullEnum)
		}
		return
	}
	for _, v := range vals {
		out.Enum = append(out.Enum, *rawJSON(v))
	}
	if vals != nil && len(out.Enum) == 0 {
		c.warn(a, "an empty enum (no value allowed) is not expressed")
	}
}

const nullEnum = "an enum that allows null is checked by Helm only (the API server refuses null beside an enum)"
