package scaffold

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// setWatchField adds key: value to the kind's watches.yaml entry unless
// the entry has key: it is then the user's choice, kept, and own is true.
// A nil value changes nothing (own still says whether the entry has key).
// create-api writes each of its decisions (scope, storage, crds) this way.
func (r *Result) setWatchField(o Options, key string, value *yaml.Node) (c Change, own bool, err error) {
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
		if hasField(item, key) {
			return c, true, nil
		}
		if value == nil {
			return c, false, nil
		}
		item.Content = append(item.Content, scalar(key), value)
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

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }
