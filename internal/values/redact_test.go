package values

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
)

// Secret paths are found wherever the schema puts them, and in subcharts.
func TestSecretStringsEverywhereInTheSchema(t *testing.T) {
	pw := `{"type": "string", "writeOnly": true}`
	for _, tc := range []struct {
		name, schema string
		vals         string
		want         string
	}{
		{"top-level", `{"properties": {"password": ` + pw + `, "name": {"type": "string"}}}`,
			`{"password": "top-secret", "name": "not-secret"}`, "[top-secret]"},
		{"nested property, format password", `{"properties": {"db": {"properties": {"token": {"type": "string", "format": "password"}}}}}`,
			`{"db": {"token": "tok-123456", "host": "db.example"}}`, "[tok-123456]"},
		{"items of a list", `{"properties": {"users": {"type": "array", "items": {"properties": {"name": {"type": "string"}, "password": ` + pw + `}}}}}`,
			`{"users": [{"name": "alice", "password": "alice-secret"}, {"name": "bob", "password": "bob-secret"}]}`, "[alice-secret bob-secret]"},
		{"tuple items", `{"properties": {"pair": {"type": "array", "items": [{"type": "string"}, ` + pw + `]}}}`,
			`{"pair": ["first", "second"]}`, "[second first]"}, // tuple positions are not told apart: both hidden
		{"additionalProperties", `{"properties": {"tokens": {"type": "object", "additionalProperties": ` + pw + `}}}`,
			`{"tokens": {"ci": "ci-token-1", "cd": "cd-token-2"}}`, "[cd-token-2 ci-token-1]"},
		{"patternProperties", `{"patternProperties": {"^key-": ` + pw + `}}`,
			`{"key-a": "pattern-secret"}`, "[pattern-secret]"},
		{"$ref to definitions", `{"definitions": {"cred": {"properties": {"secret": ` + pw + `}}}, "properties": {"a": {"$ref": "#/definitions/cred"}}}`,
			`{"a": {"secret": "ref-secret-a"}}`, "[ref-secret-a]"},
		{"$ref to $defs in a list", `{"$defs": {"cred": {"properties": {"secret": ` + pw + `}}}, "properties": {"l": {"items": {"$ref": "#/$defs/cred"}}}}`,
			`{"l": [{"secret": "ref-secret-b"}]}`, "[ref-secret-b]"},
		{"recursive $ref", `{"$defs": {"node": {"properties": {"key": ` + pw + `, "child": {"$ref": "#/$defs/node"}}}}, "$ref": "#/$defs/node"}`,
			`{"key": "root-key", "child": {"key": "child-key"}}`, "[root-key]"}, // the recursion stops at itself
		{"allOf", `{"allOf": [{"properties": {"pin": ` + pw + `}}]}`, `{"pin": "all-of-pin"}`, "[all-of-pin]"},
		{"secret object: every leaf", `{"properties": {"creds": {"type": "object", "writeOnly": true}}}`,
			`{"creds": {"user": "someone", "port": 54321, "list": ["list-secret"]}}`, "[list-secret someone 54321]"},
		{"short values are not hidden", `{"properties": {"pin": ` + pw + `}}`, `{"pin": "123"}`, "[]"},
		{"wrong shape in the values", `{"properties": {"users": {"items": {"properties": {"password": ` + pw + `}}}}}`,
			`{"users": {"password": "not-a-list"}}`, "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var vals map[string]any
			if err := json.Unmarshal([]byte(tc.vals), &vals); err != nil {
				t.Fatal(err)
			}
			got := SecretStrings(&chart.Chart{Schema: []byte(tc.schema)}, vals)
			if fmt.Sprint(got) != tc.want {
				t.Errorf("SecretStrings = %q, want %s", got, tc.want)
			}
		})
	}
}

// A subchart's secrets live under its name (or alias) in the parent's
// values; its global ones under the parent's global.
func TestSecretStringsOfSubcharts(t *testing.T) {
	sub := &chart.Chart{Metadata: &chart.Metadata{Name: "store"}, Schema: []byte(`{"properties": {
	  "token": {"type": "string", "format": "password"},
	  "global": {"properties": {"shared": {"type": "string", "writeOnly": true}}}}}`)}
	aliased := &chart.Chart{Metadata: &chart.Metadata{Name: "cache"}, Schema: []byte(`{"properties": {"key": {"type": "string", "writeOnly": true}}}`)}
	parent := &chart.Chart{Metadata: &chart.Metadata{Name: "app", Dependencies: []*chart.Dependency{{Name: "cache", Alias: "redis"}}}}
	parent.AddDependency(sub, aliased)
	vals := map[string]any{
		"store":  map[string]any{"token": "store-token"},
		"redis":  map[string]any{"key": "redis-key-1"},
		"cache":  map[string]any{"key": "not-the-alias"},
		"global": map[string]any{"shared": "global-shared"},
	}
	if got := fmt.Sprint(SecretStrings(parent, vals)); got != "[global-shared redis-key-1 store-token]" {
		t.Errorf("SecretStrings = %s", got)
	}
}

// Every form a message carries a secret in is hidden.
func TestRedactorHidesEveryForm(t *testing.T) {
	const secret = `p@ss"w<o>rd\ü`
	b := []byte(secret)
	jsonOf := func(v any) string { j, _ := json.Marshal(v); return string(j) }
	r := NewRedactor([]string{secret, "abc"})
	for _, tc := range []struct{ name, msg string }{
		{"exact", "password " + secret + " rejected"},
		{"Go %q", fmt.Sprintf("password %q rejected", secret)},
		{"strconv.QuoteToASCII", "password " + strconv.QuoteToASCII(secret)},
		{"JSON", `values: {"password":` + jsonOf(secret) + `}`},
		{"JSON without HTML escaping", `{"password":"p@ss\"w<o>rd\\ü"}`},
		{"JSON twice", jsonOf(`{"password":` + jsonOf(secret) + `}`)},
		{"Go %q of %q", fmt.Sprintf("%q", fmt.Sprintf("%q", secret))},
		{"base64", "data: " + base64.StdEncoding.EncodeToString(b)},
		{"base64 raw", "data: " + base64.RawStdEncoding.EncodeToString(b)},
		{"base64 URL", "data: " + base64.URLEncoding.EncodeToString(b)},
		{"base64 raw URL", "data: " + base64.RawURLEncoding.EncodeToString(b)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.Redact(tc.msg)
			if !strings.Contains(got, Redacted) || strings.Contains(got, "p@ss") || strings.Contains(got, base64.RawStdEncoding.EncodeToString(b)[:8]) {
				t.Errorf("Redact(%s) = %s", tc.msg, got)
			}
		})
	}
	if got := r.Redact("abcdef"); got != "abcdef" {
		t.Errorf("a secret shorter than %d characters garbled %q", MinSecretLength, got)
	}
	var none *Redactor
	if none.Redact("x") != "x" || none.Error(nil) != nil || NewRedactor(nil).Redact("abcd") != "abcd" {
		t.Error("a nil or empty Redactor must change nothing")
	}
}

func TestRedactorErrorKeepsTheChain(t *testing.T) {
	sentinel := errors.New("boom")
	r := NewRedactor([]string{"hunter2-canary"})
	red := r.Error(fmt.Errorf("hook: %q: %w", "hunter2-canary", sentinel))
	if strings.Contains(red.Error(), "hunter2") || !errors.Is(red, sentinel) {
		t.Fatalf("not redacted or chain lost: %v", red)
	}
	if r.Error(sentinel) != sentinel {
		t.Error("an error without secrets must come back as it is")
	}
}

func BenchmarkRedact(b *testing.B) {
	secrets := make([]string, 20)
	for i := range secrets {
		secrets[i] = fmt.Sprintf("secret-value-%02d-xyz", i)
	}
	r := NewRedactor(secrets)
	msg := strings.Repeat("an ordinary error message about a release that failed; ", 40) + secrets[7]
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = r.Redact(msg)
	}
}

// A value read from a file ends in a newline: hidden with it and trimmed,
// as it is, quoted and base64-encoded.
func TestRedactorHidesTrimmedForms(t *testing.T) {
	const secret = "s3cr3t-from-file\n"
	r := NewRedactor([]string{secret, " ab \n"})
	for _, msg := range []string{
		"token " + secret + " rejected",
		"token s3cr3t-from-file rejected",
		fmt.Sprintf("token %q rejected", "s3cr3t-from-file"),
		"data: " + base64.StdEncoding.EncodeToString([]byte("s3cr3t-from-file")),
		"data: " + base64.StdEncoding.EncodeToString([]byte(secret)),
	} {
		if got := r.Redact(msg); strings.Contains(got, "s3cr3t") || strings.Contains(got, "czNjcjN0") || !strings.Contains(got, Redacted) {
			t.Errorf("Redact(%q) = %q", msg, got)
		}
	}
	if got := r.Redact("a table of ab"); got != "a table of ab" {
		t.Errorf("a trimmed secret shorter than %d characters garbled %q", MinSecretLength, got)
	}
}
