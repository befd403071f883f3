package values

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/chart"
)

// A secret path says where a value the schema marks secret sits in the
// values: a property name per segment, or any key / any index (an array's
// items, additionalProperties, patternProperties).
type segment struct {
	key string
	any bool
}

type secretPath []segment

// maxSchemaDepth bounds the walk of a schema: deeper nesting (or a $ref
// cycle that keeps changing path) stops there.
const maxSchemaDepth = 64

// pathsByChart remembers secretPaths per loaded chart.
var pathsByChart sync.Map // *chart.Chart -> []secretPath

// secretPaths returns the paths the chart's schema, and its subcharts'
// schemas (their values live under the subchart's name or alias; their
// "global" under the parent's "global"), mark secret. The walk is done once
// per loaded chart (it runs on every reconcile).
func secretPaths(ch *chart.Chart) []secretPath {
	if ch == nil {
		return nil
	}
	if p, ok := pathsByChart.Load(ch); ok {
		return p.([]secretPath)
	}
	var paths []secretPath
	var schema any
	if len(ch.Schema) > 0 && json.Unmarshal(ch.Schema, &schema) == nil { // Validate reports a broken schema
		w := schemaWalk{root: schema, into: &paths, expanding: map[string]bool{}}
		w.walk(schema, nil)
	}
	for _, sub := range ch.Dependencies() {
		key := SubchartKey(ch, sub)
		for _, p := range secretPaths(sub) {
			if len(p) > 0 && !p[0].any && p[0].key == "global" {
				paths = append(paths, p) // Helm hands the parent's global down
				continue
			}
			paths = append(paths, append(secretPath{{key: key}}, p...))
		}
	}
	pathsByChart.Store(ch, paths)
	return paths
}

// SubchartKey is where a subchart's values live in its parent's: its alias
// if the parent gives one, else its name.
func SubchartKey(parent, sub *chart.Chart) string {
	if parent.Metadata != nil {
		for _, d := range parent.Metadata.Dependencies {
			if d.Name == sub.Name() && d.Alias != "" {
				return d.Alias
			}
		}
	}
	return sub.Name()
}

// schemaWalk finds the secret paths of one JSON schema.
type schemaWalk struct {
	root any
	into *[]secretPath
	// expanding holds the $refs being expanded on the way to the current
	// node: a recursive schema stops where it refers to itself.
	expanding map[string]bool
}

// walk visits a schema node found at path.
func (w *schemaWalk) walk(node any, path secretPath) {
	s, ok := node.(map[string]any)
	if !ok || len(path) > maxSchemaDepth {
		return
	}
	if ref, ok := s["$ref"].(string); ok && !w.expanding[ref] {
		if target, ok := w.resolve(ref); ok {
			w.expanding[ref] = true
			w.walk(target, path)
			delete(w.expanding, ref)
		}
	}
	if isSecret(s) {
		*w.into = append(*w.into, slices.Clone(path))
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, k := range sortedKeys(props) {
			w.walk(props[k], append(path, segment{key: k}))
		}
	}
	anyKey := append(path, segment{any: true})
	if pp, ok := s["patternProperties"].(map[string]any); ok {
		for _, k := range sortedKeys(pp) {
			w.walk(pp[k], anyKey)
		}
	}
	for _, k := range []string{"additionalProperties", "items", "additionalItems", "contains"} {
		switch sub := s[k].(type) {
		case map[string]any:
			w.walk(sub, anyKey)
		case []any: // draft-07 tuple items
			for _, x := range sub {
				w.walk(x, anyKey)
			}
		}
	}
	if pi, ok := s["prefixItems"].([]any); ok {
		for _, x := range pi {
			w.walk(x, anyKey)
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		if subs, ok := s[k].([]any); ok {
			for _, x := range subs {
				w.walk(x, path)
			}
		}
	}
	for _, k := range []string{"if", "then", "else"} {
		w.walk(s[k], path)
	}
}

// resolve follows a local $ref ("#", "#/definitions/x", "#/$defs/x", any
// JSON pointer into the same document). Remote refs are not followed.
func (w *schemaWalk) resolve(ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	node := w.root
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#"), "/")[1:] {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n := node.(type) {
		case map[string]any:
			node = n[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil, false
			}
			node = n[i]
		default:
			return nil, false
		}
	}
	return node, node != nil
}

func isSecret(schema map[string]any) bool {
	wo, _ := schema["writeOnly"].(bool)
	format, _ := schema["format"].(string)
	return wo || format == "password"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// collect appends the values found at path in v: every string (and
// integer) under it, a whole object or list marked secret included.
func (p secretPath) collect(v any, into map[string]bool) {
	if len(p) == 0 {
		leaves(v, into, 0)
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if !p[0].any {
			p[1:].collect(x[p[0].key], into)
			return
		}
		for _, e := range x {
			p[1:].collect(e, into)
		}
	case []any:
		if p[0].any {
			for _, e := range x {
				p[1:].collect(e, into)
			}
		}
	}
}

// leaves adds every scalar under v that is long enough to hide.
func leaves(v any, into map[string]bool, depth int) {
	if depth > maxSchemaDepth {
		return
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case int64:
		s = strconv.FormatInt(x, 10)
	case int:
		s = strconv.Itoa(x)
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	case json.Number:
		s = x.String()
	case map[string]any:
		for _, e := range x {
			leaves(e, into, depth+1)
		}
	case []any:
		for _, e := range x {
			leaves(e, into, depth+1)
		}
	}
	if len(s) >= MinSecretLength {
		into[s] = true
	}
}
