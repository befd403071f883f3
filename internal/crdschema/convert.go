package crdschema

import (
	"regexp"
	"slices"
	"sort"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// convert maps one schema node.
func (c *converter) convert(raw any, a at) apiextv1.JSONSchemaProps {
	if c.overBudget(a) {
		return anyValue()
	}
	s, ok := raw.(map[string]any)
	if !ok {
		if b, isBool := raw.(bool); isBool && !b {
			c.warn(a, "the schema false (no value allowed) is not expressed")
		}
		return anyValue()
	}
	if ref, ok := s["$ref"].(string); ok {
		return c.expandRef(s, ref, a)
	}
	if alt, ok := nullOr(s); ok {
		// anyOf/oneOf of one schema and null: that schema, nullable.
		out := c.convert(alt, a)
		out.Nullable = true
		if len(out.Enum) > 0 {
			out.Enum = nil
			c.warn(a, nullEnum)
		}
		if d := str(s, "description"); d != "" {
			out.Description = d
		}
		return out
	}
	var merged []string
	s, merged = c.mergeAllOf(s, a)
	// The $refs allOf inlined stay in force below this node: a recursion
	// through them stops like one through a plain $ref.
	c.refs = append(c.refs, merged...)
	defer func() { c.refs = c.refs[:len(c.refs)-len(merged)] }()
	for k := range s {
		if what, ok := helmOnly[k]; ok && what != "" {
			c.warn(a, "%s is checked by Helm, not by the API server", what)
		} else if !handled[k] && !ok && !strings.HasPrefix(k, "x-") {
			c.warn(a, "unknown keyword %q ignored", k)
		}
	}

	types, nullable := c.types(s)
	var out apiextv1.JSONSchemaProps
	switch {
	case len(types) == 0:
		out = anyValue()
	case len(types) == 1:
		out.Type = types[0]
	case slices.Equal(types, []string{"integer", "string"}):
		out.XIntOrString = true
		out.AnyOf = []apiextv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}
	case slices.Equal(types, []string{"integer", "number"}):
		out.Type = "number"
	default:
		c.warn(a, "a value of types %s is accepted as any value by the API server", strings.Join(types, " or "))
		out = anyValue()
	}
	out.Nullable = nullable
	out.Description = str(s, "description")
	if out.Description == "" {
		out.Description = str(s, "title")
	}
	c.enum(s, &out, a)
	if d, ok := s["default"]; ok && d != nil {
		out.Default = rawJSON(d)
	}
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 && ex[0] != nil {
		out.Example = rawJSON(ex[0])
	} else if e, ok := s["example"]; ok && e != nil {
		out.Example = rawJSON(e)
	}
	if f := str(s, "format"); f != "" {
		if formatSupported(out.Type, f) {
			out.Format = f
		} else {
			c.warn(a, "format %q is not one the API server checks", f)
		}
	}

	switch out.Type {
	case "object":
		c.object(s, &out, a)
	case "array":
		c.array(s, &out, a)
	case "string":
		out.MinLength, out.MaxLength = intPtr(s, "minLength"), intPtr(s, "maxLength")
		if p := str(s, "pattern"); p != "" {
			if _, err := regexp.Compile(p); err != nil {
				c.warn(a, "pattern %q is not an RE2 expression the API server can run", p)
			} else {
				out.Pattern = p
			}
		}
	case "integer", "number":
		c.bounds(s, &out)
		if m, ok := num(s, "multipleOf"); ok {
			out.MultipleOf = &m
		}
	}
	return out
}

// types returns a node's non-null types, sorted, and whether null is
// allowed. Without "type", it is read from the keywords that imply one, or
// from anyOf/oneOf alternatives that each name a single type.
func (c *converter) types(s map[string]any) ([]string, bool) {
	types := declaredTypes(s)
	if len(types) == 0 {
		switch {
		case s["properties"] != nil || s["additionalProperties"] != nil || s["required"] != nil:
			types = []string{"object"}
		case s["items"] != nil:
			types = []string{"array"}
		default:
			types = c.alternativeTypes(s)
		}
	}
	nullable := s["nullable"] == true
	if slices.Contains(types, "null") {
		nullable = true
		types = slices.DeleteFunc(types, func(t string) bool { return t == "null" })
	}
	sort.Strings(types)
	return slices.Compact(types), nullable
}

// declaredTypes are the types a node's "type" names (a string or a list
// of strings).
func declaredTypes(s map[string]any) []string {
	var types []string
	switch t := s["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, v := range t {
			if vs, ok := v.(string); ok {
				types = append(types, vs)
			}
		}
	}
	return types
}

// alternativeTypes are the types s's anyOf/oneOf alternatives name, when
// every one of them names its types. One that does not (no "type", a
// schema true, a nested anyOf) may take a value of any type, and so does
// the node: nil.
func (c *converter) alternativeTypes(s map[string]any) []string {
	var types []string
	for _, m := range c.alternatives(s) {
		ts := declaredTypes(m)
		if len(ts) == 0 {
			return nil
		}
		types = append(types, ts...)
	}
	return types
}

// nullOr returns the one alternative of an anyOf or oneOf whose other
// alternative is {"type": "null"}, when the node says nothing else that
// validates.
func nullOr(s map[string]any) (any, bool) {
	var alts []any
	for k, v := range s {
		switch k {
		case "anyOf", "oneOf":
			if alts != nil {
				return nil, false
			}
			alts, _ = v.([]any)
		case "description", "title", "$comment", "default", "examples", "deprecated":
		default:
			return nil, false
		}
	}
	if len(alts) != 2 {
		return nil, false
	}
	for i, alt := range alts {
		if m, ok := alt.(map[string]any); ok && len(m) == 1 && m["type"] == "null" {
			return alts[1-i], true
		}
	}
	return nil, false
}
