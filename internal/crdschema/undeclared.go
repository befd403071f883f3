package crdschema

import (
	"fmt"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// addUndeclared types, from values.yaml, the keys an open object of the
// chart's schema (one that allows keys beyond its properties) does not
// declare: their defaults give their types and their comments the
// descriptions; their maps keep unknown fields, as the schema allows.
// Nothing is added in lists or where the templates use the object whole
// (its keys reach the manifests as they are, of any type). A key only
// anyOf/oneOf alternatives declare (alts) takes any value, reported: the
// alternatives may allow other types than its default's.
func (c *converter) addUndeclared(out *apiextv1.JSONSchemaProps, a at, alts map[string]bool) {
	if a.inList || a.node == nil || c.usage.open(a.values) {
		return
	}
	c.openMaps++
	defer func() { c.openMaps-- }()
	for _, kv := range entries(a.node, 0) {
		k, v := kv[0], kv[1]
		if _, declared := out.Properties[k.Value]; declared {
			continue
		}
		p := c.infer(v, a.child(k.Value))
		if alts[k.Value] {
			p = anyValue()
			c.warn(a.child(k.Value), "declared only in anyOf/oneOf alternatives: any value is kept, Helm checks the alternatives")
		}
		p.Nullable = true // null removes a default, as in helm --set key=null
		if d := describe(k, v); d != "" {
			p.Description = d
		}
		if out.Properties == nil {
			out.Properties = map[string]apiextv1.JSONSchemaProps{}
		}
		out.Properties[k.Value] = p
	}
}

// valuesNode parses a chart's values.yaml (nil when it has none).
func valuesNode(ch *chart.Chart) (*yaml.Node, error) {
	for _, f := range ch.Raw {
		if f.Name != chartutil.ValuesfileName {
			continue
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(f.Data, &doc); err != nil {
			return nil, fmt.Errorf("values.yaml: %w", err)
		}
		if doc.Kind == 0 {
			return nil, nil
		}
		return &doc, nil
	}
	return nil, nil
}

// entries returns the key and value nodes of a mapping (through documents,
// aliases and merge keys; a later key wins), or nil.
func entries(n *yaml.Node, depth int) [][2]*yaml.Node {
	for n != nil && (n.Kind == yaml.DocumentNode || n.Kind == yaml.AliasNode) && depth < 64 {
		depth++
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) > 0 {
			n = n.Content[0]
		} else {
			return nil
		}
	}
	if n == nil || n.Kind != yaml.MappingNode || depth >= 64 {
		return nil
	}
	var out [][2]*yaml.Node
	index := map[string]int{}
	add := func(k, v *yaml.Node) {
		if i, dup := index[k.Value]; dup {
			out[i] = [2]*yaml.Node{k, v}
			return
		}
		index[k.Value] = len(out)
		out = append(out, [2]*yaml.Node{k, v})
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value != "<<" {
			add(k, v)
			continue
		}
		merged := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			merged = v.Content
		}
		for _, m := range merged {
			for _, kv := range entries(m, depth+1) {
				if _, set := index[kv[0].Value]; !set {
					add(kv[0], kv[1])
				}
			}
		}
	}
	return out
}

// lookup returns the value of key in a mapping node, or nil.
func lookup(n *yaml.Node, key string) *yaml.Node {
	for _, kv := range entries(n, 0) {
		if kv[0].Value == key {
			return kv[1]
		}
	}
	return nil
}
