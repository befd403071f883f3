package scaffold

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// setCRDPolicy writes `crds: {policy: create}` into the new kind's
// watches.yaml entry when its chart ships CRDs (in crds/ or in templates
// rendered with the defaults and samples), unless the entry has a crds
// field of its own. It adds the line saying what it decided and why (none
// when it changed nothing).
func setCRDPolicy(r *Result, o Options, w watches.Watch, renders []manifests.Rendered, d *Decisions) error {
	names := manifests.ChartCRDNames(w, renders)
	if len(names) == 0 {
		return nil
	}
	c, own, err := r.SetCRDPolicy(o, watches.CRDPolicyCreate)
	if err != nil || own || c.Action == "unchanged" {
		return err
	}
	d.Lines = append(d.Lines, fmt.Sprintf("  set crds.policy %s: the chart ships CRDs (%s): chartkeeper creates the missing ones before each install or upgrade "+
		"and never replaces or deletes one (skip: install them yourself; create-and-replace: also take the chart's changes to them when they break no custom resource)",
		watches.CRDPolicyCreate, strings.Join(names, ", ")))
	return nil
}

// SetCRDPolicy writes `crds: {policy: <policy>}` into the kind's
// watches.yaml entry when the entry has no crds field yet (the caller
// found that the chart ships CRDs). An entry that has one keeps it: it is
// the user's choice, and own is then true.
func (r *Result) SetCRDPolicy(o Options, policy string) (c Change, own bool, err error) {
	crds := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle, Content: []*yaml.Node{scalar("policy"), scalar(policy)}}
	return r.setWatchField(o, "crds", crds)
}
