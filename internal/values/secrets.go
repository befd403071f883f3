package values

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/chart"
)

// MinSecretLength is the shortest secret value Redact hides: a shorter
// string occurs by chance in ordinary messages and hiding it would garble
// them (and protects nothing).
const MinSecretLength = 4

// Redacted replaces a secret value in messages.
const Redacted = "[redacted]"

// SecretStrings returns the values a chart's values.schema.json marks
// secret: string properties with "writeOnly": true or "format": "password"
// (JSON Schema's and OpenAPI's markers), looked up in vals by their path
// under "properties". Longest first, no duplicates, each at least
// MinSecretLength long. A chart without a schema has none. The schema is
// read once per chart (it runs on every reconcile).
func SecretStrings(ch *chart.Chart, vals map[string]any) []string {
	seen := map[string]bool{}
	for _, path := range secretPaths(ch) {
		var v any = vals
		for _, k := range path {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		if s, ok := v.(string); ok && len(s) >= MinSecretLength {
			seen[s] = true
		}
	}
	if len(seen) == 0 {
		return nil
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) || len(out[i]) == len(out[j]) && out[i] < out[j] })
	return out
}

// pathsByChart remembers secretPaths per loaded chart.
var pathsByChart sync.Map // *chart.Chart -> [][]string

// secretPaths returns the property paths the chart's schema marks secret.
func secretPaths(ch *chart.Chart) [][]string {
	if ch == nil || len(ch.Schema) == 0 {
		return nil
	}
	if p, ok := pathsByChart.Load(ch); ok {
		return p.([][]string)
	}
	var schema map[string]any
	var paths [][]string
	if err := json.Unmarshal(ch.Schema, &schema); err == nil { // Validate reports a broken schema
		collectPaths(schema, nil, &paths)
	}
	pathsByChart.Store(ch, paths)
	return paths
}

// collectPaths walks a schema's properties and appends the paths of those
// marked secret.
func collectPaths(schema map[string]any, path []string, into *[][]string) {
	if isSecret(schema) {
		*into = append(*into, slices.Clone(path))
	}
	props, _ := schema["properties"].(map[string]any)
	for k, sub := range props {
		if subSchema, ok := sub.(map[string]any); ok {
			collectPaths(subSchema, append(path, k), into)
		}
	}
}

func isSecret(schema map[string]any) bool {
	wo, _ := schema["writeOnly"].(bool)
	format, _ := schema["format"].(string)
	return wo || format == "password"
}

// Redact replaces every secret in s.
func Redact(s string, secrets []string) string {
	for _, sec := range secrets {
		s = strings.ReplaceAll(s, sec, Redacted)
	}
	return s
}

// RedactError returns err with every secret in its message replaced; it
// still unwraps to err, so errors.Is and errors.As see through it.
func RedactError(err error, secrets []string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	msg := Redact(err.Error(), secrets)
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
