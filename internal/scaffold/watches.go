package scaffold

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// watchEdit is a pending change to watches.yaml.
type watchEdit struct {
	Change
	path string
	data []byte // nil: nothing to write
}

func (e watchEdit) apply(u *undo) error {
	if e.data == nil {
		return nil
	}
	return writeFile(e.path, e.data, u)
}

// addWatch plans the watches.yaml entry of the kind: appended when the
// kind is new, its version updated when only that differs, refused when
// the kind is already backed by another chart.
func addWatch(path string, o Options, chartPath string) (watchEdit, error) {
	e := watchEdit{Change: Change{Path: "watches.yaml"}, path: path}
	entry := fmt.Sprintf("- group: %s\n  version: %s\n  kind: %s\n  chart: %s\n", o.Group, o.Version, o.Kind, filepath.ToSlash(chartPath))
	if o.ServiceAccount != "" {
		entry += fmt.Sprintf("  impersonate:\n    serviceAccount: %q\n", o.ServiceAccount)
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		e.Action, e.data = "created", []byte("# Each entry maps a custom resource kind to the chart that backs it.\n"+entry)
		return e, nil
	}
	if err != nil {
		return e, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return e, fmt.Errorf("%s: %w", path, err)
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.SequenceNode {
		for _, item := range doc.Content[0].Content {
			if field(item, "group") != o.Group || field(item, "kind") != o.Kind {
				continue
			}
			if c := field(item, "chart"); filepath.Clean(c) != filepath.Clean(chartPath) {
				return e, fmt.Errorf("%s: kind %s.%s is already backed by the chart %s, not %s", path, o.Kind, o.Group, c, chartPath)
			}
			if field(item, "version") == o.Version {
				e.Action = "unchanged"
				return e, nil
			}
			setField(item, "version", o.Version)
			var out bytes.Buffer
			enc := yaml.NewEncoder(&out)
			enc.SetIndent(2)
			if err := enc.Encode(&doc); err != nil {
				return e, err
			}
			e.Action, e.data = "updated", out.Bytes()
			return e, nil
		}
	} else if len(bytes.TrimSpace(b)) > 0 && doc.Kind != 0 {
		return e, fmt.Errorf("%s: the top level must be a list of watch entries", path)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	e.Action, e.data = "updated", append(b, entry...)
	return e, nil
}

func field(m *yaml.Node, key string) string {
	if m.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1].Value
		}
	}
	return ""
}

func setField(m *yaml.Node, key, value string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1].Value = value
			return
		}
	}
}
