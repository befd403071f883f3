package crdschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Warning is one part of a chart's schema the CRD does not express. The
// API server accepts what it says no to; Helm still refuses it when the
// custom resource is reconciled (a Stalled condition with Helm's message).
type Warning struct {
	// Path is the field, as in a custom resource ("spec.image.tag").
	Path string
	// Detail says what is not expressed and why.
	Detail string
}

func (w Warning) String() string { return w.Path + ": " + w.Detail }

// converter turns one draft-07 JSON schema into a structural schema.
type converter struct {
	root  map[string]any
	usage usage
	warns []Warning
	refs  []string // $refs being expanded, to stop at recursion
	// expanding are the YAML anchors being inferred, to stop at an alias
	// inside its own anchor.
	expanding map[*yaml.Node]bool
	visited   int // schema nodes converted or values.yaml nodes inferred
}

// maxNodes bounds the work on a schema or values.yaml whose $refs or
// aliases expand exponentially (the CRD would be too big for etcd anyway).
const maxNodes = 50000

// overBudget counts a node and reports (once) when there were too many.
func (c *converter) overBudget(a at) bool {
	c.visited++
	if c.visited == maxNodes+1 {
		c.warn(a, "the schema expands to more than %d nodes ($refs, aliases): from here on any value is accepted", maxNodes)
	}
	return c.visited > maxNodes
}

// at is where in the values a schema node sits.
type at struct {
	path     string // as shown to users: spec.a.b, spec.list[*].c
	values   string // dotted values path for template usage; "" at the root
	inList   bool   // under an array: no chart defaults, no template usage
	defaults any    // the chart's default value here (maps only matter)
}

func (a at) child(key string) at {
	c := at{path: a.path + "." + key, inList: a.inList}
	if !a.inList {
		c.values = join(a.values, key)
	}
	if m, ok := a.defaults.(map[string]any); ok {
		c.defaults = m[key]
	}
	return c
}

func (a at) items() at { return at{path: a.path + "[*]", inList: true} }

func (a at) mapValues() at { return at{path: a.path + ".*", inList: true} }

func (c *converter) warn(a at, format string, args ...any) {
	c.warns = append(c.warns, Warning{Path: a.path, Detail: fmt.Sprintf(format, args...)})
}

// anyValue accepts every JSON value (and keeps it whole).
func anyValue() apiextv1.JSONSchemaProps {
	return apiextv1.JSONSchemaProps{XPreserveUnknownFields: ptrTrue()}
}

func ptrTrue() *bool { t := true; return &t }

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

// types returns a node's non-null types, sorted, and whether null is
// allowed. Without "type", it is read from the keywords that imply one, or
// from anyOf/oneOf alternatives that each name a single type.
func (c *converter) types(s map[string]any) ([]string, bool) {
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
	if len(types) == 0 {
		switch {
		case s["properties"] != nil || s["additionalProperties"] != nil || s["required"] != nil:
			types = []string{"object"}
		case s["items"] != nil:
			types = []string{"array"}
		default:
			for _, k := range []string{"anyOf", "oneOf"} {
				alts, _ := s[k].([]any)
				for _, alt := range alts {
					m, _ := alt.(map[string]any)
					if ts, ok := m["type"].(string); ok {
						types = append(types, ts)
					}
				}
			}
		}
	}
	nullable := s["nullable"] == true
	if i := slices.Index(types, "null"); i >= 0 {
		nullable = true
		types = slices.Delete(types, i, i+1)
	}
	sort.Strings(types)
	return slices.Compact(types), nullable
}

// object maps properties, required and additionalProperties.
func (c *converter) object(s map[string]any, out *apiextv1.JSONSchemaProps, a at) {
	props, _ := s["properties"].(map[string]any)
	extra, hasExtra := s["additionalProperties"]
	if _, ok := s["patternProperties"]; ok && !hasExtra {
		extra, hasExtra = true, true // keys by pattern: keep them, Helm checks them
	}
	if len(props) > 0 {
		out.Properties = map[string]apiextv1.JSONSchemaProps{}
		for k, v := range props {
			p := c.convert(v, a.child(k))
			if !a.inList {
				p.Nullable = true // null removes a default, as in helm --set key=null
			}
			out.Properties[k] = p
		}
		out.Required = c.required(s, a)
		switch {
		case extra == false:
		case hasExtra, !a.inList && c.usage.open(a.values):
			// More keys than the listed ones are taken (or the
			// templates use this object whole): keep them.
			out.XPreserveUnknownFields = ptrTrue()
			if m, ok := extra.(map[string]any); ok && len(m) > 0 {
				c.warn(a, "additionalProperties beside properties: extra keys are kept but checked by Helm only")
			}
		}
	} else {
		switch e := extra.(type) {
		case map[string]any:
			if len(e) == 0 {
				out.XPreserveUnknownFields = ptrTrue()
			} else {
				item := c.convert(e, a.mapValues())
				out.AdditionalProperties = &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &item}
			}
		case bool:
			if e {
				out.XPreserveUnknownFields = ptrTrue()
			}
		default:
			out.XPreserveUnknownFields = ptrTrue() // a free-form map
		}
		out.Required = c.required(s, a)
	}
	out.MinProperties, out.MaxProperties = intPtr(s, "minProperties"), intPtr(s, "maxProperties")
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

// enum maps enum and const; a null among the values makes the field
// nullable instead.
func (c *converter) enum(s map[string]any, out *apiextv1.JSONSchemaProps, a at) {
	vals, _ := s["enum"].([]any)
	if v, ok := s["const"]; ok {
		vals = []any{v}
	}
	for _, v := range vals {
		if v == nil {
			out.Nullable = true
			continue
		}
		out.Enum = append(out.Enum, *rawJSON(v))
	}
	if vals != nil && len(out.Enum) == 0 && !out.Nullable {
		c.warn(a, "an empty enum (no value allowed) is not expressed")
	}
}

func str(s map[string]any, k string) string {
	v, _ := s[k].(string)
	return v
}

func num(s map[string]any, k string) (float64, bool) {
	n, ok := s[k].(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func intPtr(s map[string]any, k string) *int64 {
	n, ok := s[k].(json.Number)
	if !ok {
		return nil
	}
	if i, err := n.Int64(); err == nil && i >= 0 {
		return &i
	}
	return nil
}

func strPtr(s string) *string { return &s }

func rawJSON(v any) *apiextv1.JSON {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return &apiextv1.JSON{Raw: b}
}

// decodeJSON parses JSON keeping numbers exact (json.Number).
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
