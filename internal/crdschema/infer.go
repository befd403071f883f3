package crdschema

import (
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// infer builds a schema from a values.yaml document: each default's type,
// its comment as the description. An empty map or list, a map the
// templates use whole and a map inside a list take any content:
// values.yaml shows defaults, not every key and type a template passes on.
func (c *converter) infer(n *yaml.Node, a at) apiextv1.JSONSchemaProps {
	if c.overBudget(a) {
		return anyValue()
	}
	for n.Kind == yaml.DocumentNode || n.Kind == yaml.AliasNode {
		if n.Kind == yaml.AliasNode {
			if n.Alias == nil || c.expanding[n.Alias] {
				c.warn(a, "a YAML alias that contains itself: any value is accepted")
				return anyValue()
			}
			if c.expanding == nil {
				c.expanding = map[*yaml.Node]bool{}
			}
			c.expanding[n.Alias] = true
			defer delete(c.expanding, n.Alias)
			n = n.Alias
		} else if len(n.Content) > 0 {
			n = n.Content[0]
		} else {
			return apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTrue()}
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		out := apiextv1.JSONSchemaProps{Type: "object"}
		if len(n.Content) == 0 || a.inList || c.usage.open(a.values) {
			// A free-form map: empty by default, or handed on whole by
			// the templates (a probe, an affinity), or a list element,
			// where the default is an example whose field types need not
			// be the only ones allowed (a port by number or by name).
			out.XPreserveUnknownFields = ptrTrue()
			return out
		}
		out.Properties = map[string]apiextv1.JSONSchemaProps{}
		if c.openMaps > 0 {
			out.XPreserveUnknownFields = ptrTrue() // undeclared by the chart's schema: any key
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" { // a merge key: its map's keys are this map's
				merged := c.infer(v, a)
				for mk, mv := range merged.Properties {
					if lookup(v, mk) != nil { // not a key only the templates read (below)
						out.Properties[mk] = mv
					}
				}
				continue
			}
			p := intOrString(k.Value, c.infer(v, a.child(k.Value)))
			p.Nullable = true // null removes a default, as in helm --set key=null
			if d := describe(k, v); d != "" {
				p.Description = d
			}
			out.Properties[k.Value] = p
		}
		c.addRead(&out, a)
		return out
	case yaml.SequenceNode:
		out := apiextv1.JSONSchemaProps{Type: "array"}
		item := anyValue()
		if len(n.Content) > 0 {
			item = c.infer(n.Content[0], a.items())
			for _, e := range n.Content[1:] {
				item = mergeInferred(item, c.infer(e, a.items()))
			}
		}
		out.Items = &apiextv1.JSONSchemaPropsOrArray{Schema: &item}
		return out
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str", "!!binary", "!!timestamp":
			return apiextv1.JSONSchemaProps{Type: "string"}
		case "!!int":
			return apiextv1.JSONSchemaProps{Type: "integer"}
		case "!!float":
			return apiextv1.JSONSchemaProps{Type: "number"}
		case "!!bool":
			return apiextv1.JSONSchemaProps{Type: "boolean"}
		}
	}
	return anyValue() // null: no type to infer
}

// intOrStringKeys are the values keys charts pass to Kubernetes fields of
// type IntOrString (a PodDisruptionBudget's budget, a rolling update's
// surge, a Service's target port): a default of 1 must not refuse "50%".
var intOrStringKeys = map[string]bool{"maxUnavailable": true, "minAvailable": true, "maxSurge": true, "targetPort": true}

// intOrString widens the inferred integer or string of such a key to
// either, as the API server's own schemas declare them.
func intOrString(key string, p apiextv1.JSONSchemaProps) apiextv1.JSONSchemaProps {
	if !intOrStringKeys[key] || (p.Type != "integer" && p.Type != "string") {
		return p
	}
	return apiextv1.JSONSchemaProps{XIntOrString: true, AnyOf: []apiextv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}}
}

// addRead adds to a closed map the keys the templates read that
// values.yaml does not show (hasKey .Values.x "maxUnavailable", a key
// commented out): the chart reads them, so the CRD must not prune them,
// and nothing tells their type.
func (c *converter) addRead(out *apiextv1.JSONSchemaProps, a at) {
	if c.openMaps > 0 || a.inList {
		return // unknown keys are kept anyway
	}
	for _, k := range c.usage.children(a.values) {
		if _, set := out.Properties[k]; !set {
			p := anyValue()
			p.Nullable = true
			p.Description = "Read by the chart's templates, not in its values.yaml: any value."
			out.Properties[k] = p
		}
	}
}

// mergeInferred joins the schemas of two list elements: same type, the
// union of their properties; different types, any value.
func mergeInferred(x, y apiextv1.JSONSchemaProps) apiextv1.JSONSchemaProps {
	switch {
	case x.Type == "" && y.Type == "":
		return x
	case x.Type == "integer" && y.Type == "number", x.Type == "number" && y.Type == "integer":
		return apiextv1.JSONSchemaProps{Type: "number"}
	case x.Type != y.Type:
		return anyValue()
	case x.Type == "array":
		ix := mergeInferred(*x.Items.Schema, *y.Items.Schema)
		x.Items = &apiextv1.JSONSchemaPropsOrArray{Schema: &ix}
		return x
	}
	return x
}

var (
	paramDoc = regexp.MustCompile(`^@param\s+\S+\s*`)
	helmDocs = regexp.MustCompile(`^--\s*(\([^)]*\)\s*)?`)
)

// describe returns the comment documenting a values key: the last
// paragraph of comment lines above it (helm-docs "# --" and Bitnami
// "## @param key" prefixes removed), or the comment after it on its line.
func describe(k, v *yaml.Node) string {
	text := k.HeadComment
	if text == "" {
		text = k.LineComment
	}
	if text == "" && v.Kind == yaml.ScalarNode {
		text = v.LineComment
	}
	if i := strings.LastIndex(text, "\n\n"); i >= 0 {
		text = text[i+2:]
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#"))
		l = helmDocs.ReplaceAllString(paramDoc.ReplaceAllString(l, ""), "")
		if l != "" && !strings.HasPrefix(l, "@") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, " ")
}

// inferValues parses values.yaml and infers its schema.
func (c *converter) inferValues(data []byte, a at) (apiextv1.JSONSchemaProps, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return apiextv1.JSONSchemaProps{}, fmt.Errorf("values.yaml: %w", err)
	}
	if doc.Kind == 0 { // empty file
		return apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTrue()}, nil
	}
	return c.infer(&doc, a), nil
}
