package scaffold

import "go.yaml.in/yaml/v3"

// SetCRDPolicy writes `crds: {policy: <policy>}` into the kind's
// watches.yaml entry when the entry has no crds field yet (the caller
// found that the chart ships CRDs). An entry that has one keeps it: it is
// the user's choice, and own is then true.
func (r *Result) SetCRDPolicy(o Options, policy string) (c Change, own bool, err error) {
	crds := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle, Content: []*yaml.Node{scalar("policy"), scalar(policy)}}
	return r.setWatchField(o, "crds", crds)
}
