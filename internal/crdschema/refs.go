package crdschema

import (
	"fmt"
	"slices"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// expandRef inlines a local $ref. Keywords beside it are ignored (as
// draft-07 says), except a description.
func (c *converter) expandRef(s map[string]any, ref string, a at) apiextv1.JSONSchemaProps {
	if slices.Contains(c.refs, ref) {
		c.warn(a, "recursive $ref %s: from here on any value is accepted by the API server", ref)
		return anyValue()
	}
	target, err := c.resolve(ref)
	if err != nil {
		c.warn(a, "%v: any value is accepted by the API server", err)
		return anyValue()
	}
	c.refs = append(c.refs, ref)
	out := c.convert(target, a)
	c.refs = c.refs[:len(c.refs)-1]
	if d := str(s, "description"); d != "" {
		out.Description = d
	}
	return out
}

// resolve follows a local JSON pointer ("#/definitions/s3").
func (c *converter) resolve(ref string) (any, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, fmt.Errorf("$ref %s points outside the chart's schema", ref)
	}
	var cur any = c.root
	for _, part := range strings.Split(strings.TrimPrefix(strings.TrimPrefix(ref, "#"), "/"), "/") {
		if part == "" {
			continue
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %s does not resolve", ref)
		}
		if cur, ok = m[part]; !ok {
			return nil, fmt.Errorf("$ref %s does not resolve", ref)
		}
	}
	return cur, nil
}

// mergeAllOf folds allOf's schemas into s: properties of both (a property
// in several becomes their allOf), required lists joined, other keywords
// kept from s first. It also returns the $refs it inlined.
func (c *converter) mergeAllOf(s map[string]any, a at) (map[string]any, []string) {
	all, ok := s["allOf"].([]any)
	if !ok {
		return s, nil
	}
	var expanded []string
	out := map[string]any{}
	for k, v := range s {
		if k != "allOf" {
			out[k] = v
		}
	}
	for _, sub := range all {
		m, ok := sub.(map[string]any)
		ref, isRef := m["$ref"].(string)
		if ok && isRef {
			if slices.Contains(c.refs, ref) {
				c.warn(a, "allOf: recursive $ref %s is not expressed", ref)
				continue
			}
			t, err := c.resolve(ref)
			if err != nil {
				c.warn(a, "allOf: %v", err)
				continue
			}
			m, ok = t.(map[string]any)
		}
		if !ok {
			continue
		}
		if isRef {
			c.refs = append(c.refs, ref)
			expanded = append(expanded, ref)
		}
		var inner []string
		m, inner = c.mergeAllOf(m, a)
		expanded = append(expanded, inner...)
		if isRef {
			c.refs = c.refs[:len(c.refs)-1]
		}
		for k, v := range m {
			switch k {
			case "properties":
				add, ok := v.(map[string]any)
				if !ok {
					continue
				}
				props, _ := out["properties"].(map[string]any)
				merged := map[string]any{}
				for pk, pv := range props {
					merged[pk] = pv
				}
				for pk, pv := range add {
					if prev, dup := merged[pk]; dup {
						merged[pk] = map[string]any{"allOf": []any{prev, pv}}
					} else {
						merged[pk] = pv
					}
				}
				out["properties"] = merged
			case "required":
				r, _ := out["required"].([]any)
				add, _ := v.([]any)
				out["required"] = append(append([]any{}, r...), add...)
			default:
				if _, set := out[k]; !set {
					out[k] = v
				}
			}
		}
	}
	return out, expanded
}
