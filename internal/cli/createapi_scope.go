package cli

import (
	"fmt"
	"io"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/scaffold"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// openScope renders the new kind's chart with its defaults and samples
// and writes the scope it needs into its watches.yaml entry, unless the
// entry has a scope of its own (kept, with a note on stderr when it does
// not allow what the chart renders). It returns the lines saying what it
// opened and why (none when it changed nothing).
func openScope(res *scaffold.Result, o scaffold.Options, w watches.Watch, renders []manifests.Rendered, stderr io.Writer) ([]string, error) {
	need, reasons := manifests.NeededScope(w, renders)
	c, own, err := res.SetScope(o, need)
	if err != nil {
		return nil, err
	}
	if own {
		if missing := notAllowed(w.Scope, need); len(missing) > 0 {
			fmt.Fprintf(stderr, "note: watches.yaml: the scope of %s is yours and is kept, but the chart renders what it does not allow (the release will stall):\n", o.Kind)
			for _, m := range missing {
				fmt.Fprintf(stderr, "  %s\n", m)
			}
		}
		return nil, nil
	}
	if c.Action == "unchanged" {
		return nil, nil
	}
	var lines []string
	for _, r := range reasons {
		lines = append(lines, "  opened "+r)
	}
	return lines, nil
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
