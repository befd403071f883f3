package scaffold

import (
	"go.yaml.in/yaml/v3"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// SetScope writes s, the scope the kind's chart needs (the caller renders
// the chart to find it), into the kind's watches.yaml entry when the entry
// has no scope yet. An entry that has a scope keeps it: it is the user's
// choice, and own is then true. An empty s changes nothing.
func (r *Result) SetScope(o Options, s watches.Scope) (c Change, own bool, err error) {
	var value *yaml.Node
	if s.ClusterScoped || len(s.Namespaces) > 0 {
		value = scopeNode(s)
	}
	return r.setWatchField(o, "scope", value)
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
