package scaffold

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// SetCRDPolicy writes `crds: {policy: <policy>}` into the kind's
// watches.yaml entry when the entry has no crds field yet (the caller
// found that the chart ships CRDs). An entry that has one keeps it: it is
// the user's choice, and own is then true.
func (r *Result) SetCRDPolicy(o Options, policy string) (c Change, own bool, err error) {
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
		if hasField(item, "crds") {
			return c, true, nil
		}
		crds := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle, Content: []*yaml.Node{scalar("policy"), scalar(policy)}}
		item.Content = append(item.Content, scalar("crds"), crds)
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
