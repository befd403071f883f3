package scaffold

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// openScope finds the scope the new kind's chart needs, rendered with its
// defaults and samples, and writes it into its watches.yaml entry, unless
// the entry has a scope of its own (kept, with a note when it does not
// allow what the chart renders). It adds the lines saying what it opened
// and why (none when it changed nothing).
func openScope(r *Result, o Options, w watches.Watch, renders []manifests.Rendered, d *Decisions) error {
	need, reasons := manifests.NeededScope(w, renders)
	c, own, err := r.SetScope(o, need)
	if err != nil {
		return err
	}
	if own {
		if missing := notAllowed(w.Scope, need); len(missing) > 0 {
			d.Notes = append(d.Notes, fmt.Sprintf("note: watches.yaml: the scope of %s is yours and is kept, but the chart renders what it does not allow (the release will stall):\n  %s",
				o.Kind, strings.Join(missing, "\n  ")))
		}
		return nil
	}
	if c.Action == "unchanged" {
		return nil
	}
	for _, reason := range reasons {
		d.Lines = append(d.Lines, "  opened "+reason)
	}
	return nil
}

// notAllowed lists what need asks for that s does not allow.
func notAllowed(s *watches.Scope, need watches.Scope) []string {
	var out []string
	if need.ClusterScoped && !s.AllowsClusterScoped() {
		out = append(out, "scope.clusterScoped: true")
	}
	for _, ns := range need.Namespaces {
		if !s.AllowsNamespace(ns, "") {
			out = append(out, "scope.namespaces: "+ns)
		}
	}
	return out
}

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
