package crdschema

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Change is one difference between two schemas of the same CRD version
// that a custom resource valid under the old one could fail under the new.
type Change struct {
	// Path is the field, as in a custom resource ("spec.image.tag").
	Path string
	// Detail says what changed.
	Detail string
}

func (c Change) String() string { return c.Path + ": " + c.Detail }

// Breaking lists the changes from old to new, at path (e.g. "spec"), that
// can break existing custom resources, sorted by path. Added optional
// fields, wider bounds and types, and new descriptions or defaults are
// compatible and not listed.
func Breaking(path string, old, new apiextv1.JSONSchemaProps) []Change {
	var out []Change
	breaking(path, &old, &new, &out)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func breaking(path string, o, n *apiextv1.JSONSchemaProps, out *[]Change) {
	add := func(format string, args ...any) {
		*out = append(*out, Change{Path: path, Detail: fmt.Sprintf(format, args...)})
	}
	ot, nt := typeName(o), typeName(n)
	switch {
	case nt == "any" || ot == nt:
	case ot == "integer" && nt == "number":
	case nt == "int-or-string" && (ot == "integer" || ot == "string"):
	default:
		add("type changed from %s to %s", ot, nt)
		return
	}
	if o.Nullable && !n.Nullable {
		add("no longer accepts null")
	}
	if len(n.Enum) > 0 {
		if len(o.Enum) == 0 {
			add("now limited to %s", enumText(n.Enum))
		} else if gone := missing(o.Enum, n.Enum); len(gone) > 0 {
			add("no longer accepts %s", strings.Join(gone, ", "))
		}
	}
	tighter := func(what string, ov, nv *float64, lower bool, oex, nex bool) {
		switch {
		case nv == nil:
		case ov == nil:
			add("new %s %v", what, *nv)
		case lower && (*nv > *ov || *nv == *ov && nex && !oex), !lower && (*nv < *ov || *nv == *ov && nex && !oex):
			add("%s tightened from %v to %v", what, *ov, *nv)
		}
	}
	tighter("minimum", o.Minimum, n.Minimum, true, o.ExclusiveMinimum, n.ExclusiveMinimum)
	tighter("maximum", o.Maximum, n.Maximum, false, o.ExclusiveMaximum, n.ExclusiveMaximum)
	tighter("minLength", f(o.MinLength), f(n.MinLength), true, false, false)
	tighter("maxLength", f(o.MaxLength), f(n.MaxLength), false, false, false)
	tighter("minItems", f(o.MinItems), f(n.MinItems), true, false, false)
	tighter("maxItems", f(o.MaxItems), f(n.MaxItems), false, false, false)
	tighter("minProperties", f(o.MinProperties), f(n.MinProperties), true, false, false)
	tighter("maxProperties", f(o.MaxProperties), f(n.MaxProperties), false, false, false)
	if n.Pattern != "" && n.Pattern != o.Pattern {
		add("pattern changed from %q to %q", o.Pattern, n.Pattern)
	}
	if n.Format != "" && n.Format != o.Format {
		add("format changed from %q to %q", o.Format, n.Format)
	}
	if n.MultipleOf != nil && (o.MultipleOf == nil || *o.MultipleOf != *n.MultipleOf) {
		add("multipleOf changed to %v", *n.MultipleOf)
	}
	if n.XListType != nil && *n.XListType == "set" && (o.XListType == nil || *o.XListType != "set") {
		add("items must now be unique")
	}
	if nt == "any" || ot == "any" {
		return
	}

	oOpen, nOpen := keepsUnknown(o), keepsUnknown(n)
	if oOpen && !nOpen && nt == "object" {
		add("no longer keeps fields it does not list")
	}
	if oOpen {
		// The old object kept any field: a custom resource may hold any
		// value where the new schema now names a type.
		for _, k := range sortedProps(n.Properties) {
			nv := n.Properties[k]
			if _, listed := o.Properties[k]; !listed && typeName(&nv) != "any" {
				*out = append(*out, Change{Path: path + "." + k, Detail: fmt.Sprintf("newly typed as %s where any field was kept", typeName(&nv))})
			}
		}
	}
	for _, k := range sortedProps(o.Properties) {
		ov := o.Properties[k]
		nv, ok := n.Properties[k]
		switch {
		case ok:
			breaking(path+"."+k, &ov, &nv, out)
		case n.AdditionalProperties != nil && n.AdditionalProperties.Schema != nil:
			breaking(path+"."+k, &ov, n.AdditionalProperties.Schema, out)
		case !nOpen:
			*out = append(*out, Change{Path: path + "." + k, Detail: "removed"})
		}
	}
	if o.AdditionalProperties != nil && o.AdditionalProperties.Schema != nil {
		switch {
		case n.AdditionalProperties != nil && n.AdditionalProperties.Schema != nil:
			breaking(path+".*", o.AdditionalProperties.Schema, n.AdditionalProperties.Schema, out)
		case !nOpen:
			add("no longer takes keys of its choosing")
		}
	}
	for _, r := range n.Required {
		if !slices.Contains(o.Required, r) && n.Properties[r].Default == nil {
			*out = append(*out, Change{Path: path + "." + r, Detail: "newly required, without a default"})
		}
	}
	if o.Items != nil && o.Items.Schema != nil && n.Items != nil && n.Items.Schema != nil {
		breaking(path+"[*]", o.Items.Schema, n.Items.Schema, out)
	}
}

// typeName names a node's type: a JSON type, int-or-string, or any.
func typeName(s *apiextv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		return "int-or-string"
	case s.Type == "":
		return "any"
	}
	return s.Type
}

func keepsUnknown(s *apiextv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields ||
		s.AdditionalProperties != nil && s.AdditionalProperties.Schema == nil && s.AdditionalProperties.Allows
}

func missing(old, new []apiextv1.JSON) []string {
	var out []string
	for _, o := range old {
		if !slices.ContainsFunc(new, func(n apiextv1.JSON) bool { return string(n.Raw) == string(o.Raw) }) {
			out = append(out, string(o.Raw))
		}
	}
	return out
}

func enumText(vals []apiextv1.JSON) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = string(v.Raw)
	}
	return strings.Join(s, ", ")
}

func f(i *int64) *float64 {
	if i == nil {
		return nil
	}
	v := float64(*i)
	return &v
}

func sortedProps(m map[string]apiextv1.JSONSchemaProps) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
