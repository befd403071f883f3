package values

import (
	"encoding/json"
	"sort"
	"strings"

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
// MinSecretLength long. A chart without a schema has none.
func SecretStrings(ch *chart.Chart, vals map[string]any) []string {
	if ch == nil || len(ch.Schema) == 0 {
		return nil
	}
	var schema map[string]any
	if err := json.Unmarshal(ch.Schema, &schema); err != nil {
		return nil // Validate reports a broken schema
	}
	seen := map[string]bool{}
	collectSecrets(schema, vals, seen)
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) || len(out[i]) == len(out[j]) && out[i] < out[j] })
	return out
}

// collectSecrets walks schema and value together.
func collectSecrets(schema map[string]any, val any, into map[string]bool) {
	if isSecret(schema) {
		if s, ok := val.(string); ok && len(s) >= MinSecretLength {
			into[s] = true
		}
	}
	obj, ok := val.(map[string]any)
	if !ok {
		return
	}
	props, _ := schema["properties"].(map[string]any)
	for k, sub := range props {
		if subSchema, ok := sub.(map[string]any); ok {
			if v, ok := obj[k]; ok {
				collectSecrets(subSchema, v, into)
			}
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
