package scaffold

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// SetScope writes s, the scope the kind's chart needs (the caller renders
// the chart to find it), into the kind's watches.yaml entry when the entry
// has no scope yet. An entry that has a scope keeps it: it is the user's
// choice, and own is then true. An empty s changes nothing.
func (r *Result) SetScope(o Options, s watches.Scope) (c Change, own bool, err error) {
	if o.ProjectDir == "" {
		o.ProjectDir = "."
	}
	c = Change{Path: "watches.yaml", Action: "unchanged"}
	path := filepath.Join(o.ProjectDir, "watches.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		return c, false, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return c, false, fmt.Errorf("%s: %w", path, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.SequenceNode {
		return c, false, fmt.Errorf("%s: the top level must be a list of watch entries", path)
	}
	for _, item := range doc.Content[0].Content {
		if field(item, "group") != o.Group || field(item, "kind") != o.Kind {
			continue
		}
		if hasField(item, "scope") {
			return c, true, nil
		}
		if !s.ClusterScoped && len(s.Namespaces) == 0 {
			return c, false, nil
		}
		item.Content = append(item.Content, scalar("scope"), scopeNode(s))
		var out bytes.Buffer
		enc := yaml.NewEncoder(&out)
		enc.SetIndent(2)
		if err := enc.Encode(&doc); err != nil {
			return c, false, err
		}
		if err := writeFile(path, out.Bytes(), r.undo); err != nil {
			return c, false, err
		}
		c.Action = "updated"
		return c, false, nil
	}
	return c, false, fmt.Errorf("%s: no entry for kind %s.%s", path, o.Kind, o.Group)
}

func hasField(m *yaml.Node, key string) bool {
	if m.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

// scopeNode is s as watches.yaml spells it.
func scopeNode(s watches.Scope) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	if len(s.Namespaces) > 0 {
		list := &yaml.Node{Kind: yaml.SequenceNode}
		for _, ns := range s.Namespaces {
			list.Content = append(list.Content, scalar(ns))
		}
		n.Content = append(n.Content, scalar("namespaces"), list)
	}
	if s.ClusterScoped {
		n.Content = append(n.Content, scalar("clusterScoped"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	}
	return n
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }
