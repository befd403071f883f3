package values

import (
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/strvals"
)

// Layers of values, as Helm stacks `-f` files and `--set` flags: each
// layer is merged over the ones before it, the last wins. valuesFrom
// (docs/values-from.md) uses them to put the ConfigMaps and Secrets a watch
// names under a custom resource's spec.

// Merge returns over deep-merged onto base, as Helm merges a -f file over
// the ones before it: maps are merged key by key, any other value of over
// (a list, a scalar, null) replaces base's. Neither argument is changed.
func Merge(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if vm, ok := v.(map[string]any); ok {
			if bm, ok := out[k].(map[string]any); ok {
				out[k] = Merge(bm, vm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// ParseDocument reads a YAML document of values (a -f file). An empty
// document is no values; one that is not a mapping is an error.
func ParseDocument(doc []byte) (chartutil.Values, error) {
	vals, err := chartutil.ReadValues(doc)
	if err != nil {
		return nil, err
	}
	return runtimeDeepCopy(vals), nil
}

// SetString sets value at path in vals, as Helm's --set-string sets it
// ("auth.password", "hosts[0]", "a\.b" for the key "a.b"): a string,
// whatever it looks like. Unlike --set-string, nothing in the value is
// syntax: a comma, a brace or a backslash is part of the string.
func SetString(vals chartutil.Values, path, value string) error {
	var b strings.Builder
	b.Grow(len(path) + 1 + 2*len(value))
	b.WriteString(path)
	b.WriteByte('=')
	for _, r := range value {
		b.WriteByte('\\') // the parser takes the rune after a backslash as it is
		b.WriteRune(r)
	}
	if err := strvals.ParseIntoString(b.String(), vals); err != nil {
		return fmt.Errorf("cannot set %s: %w", path, err)
	}
	return nil
}
