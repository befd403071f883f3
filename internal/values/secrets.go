package values

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
)

// MinSecretLength is the shortest secret value (and encoded form) Redact
// hides. A shorter string occurs by chance in ordinary messages: hiding
// "abc" would replace it inside every word, revision name and reason that
// contains it, garbling messages, and would tell a reader the secret anyway
// (the redactions mark where it stood). Such a secret is also guessable;
// a chart that takes secrets should ask for a minLength in its schema.
const MinSecretLength = 4

// Redacted replaces a secret value in messages.
const Redacted = "[redacted]"

// SecretStrings returns the values a chart's values.schema.json marks
// secret: values under a schema node with "writeOnly": true or "format":
// "password" (JSON Schema's and OpenAPI's markers), wherever the node is:
// nested properties, array items, additionalProperties and
// patternProperties, behind local $refs (definitions, $defs), under
// allOf/anyOf/oneOf, and in subcharts' schemas (under the subchart's name or
// alias). A node marked secret that holds an object or a list makes every
// string and integer under it secret. Longest first, no duplicates, each at
// least MinSecretLength long. A chart without a schema has none.
func SecretStrings(ch *chart.Chart, vals map[string]any) []string {
	seen := map[string]bool{}
	for _, path := range secretPaths(ch) {
		path.collect(vals, seen)
	}
	return sortedSecrets(seen)
}

// Leaves returns every string and number in v (a value, a map or a list of
// values) at least MinSecretLength long, longest first, no duplicates:
// the secrets of values taken whole from a Secret, whatever the schema
// says of them.
func Leaves(v any) []string {
	seen := map[string]bool{}
	leaves(v, seen, 0)
	return sortedSecrets(seen)
}

func sortedSecrets(seen map[string]bool) []string {
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

// Redactor hides a set of secrets in messages, in every form a message
// carries them: as they are; quoted or escaped by Go (%q, strconv.Quote)
// and by JSON (encoding/json, with and without HTML escaping), once and
// twice (a JSON message quoting a JSON document); and base64-encoded
// (standard and URL alphabets, padded and raw), which is how Secret data
// and Helm's b64enc show them. Base64 is only recognised for the secret
// encoded on its own: inside a longer encoded text it depends on the
// alignment. A secret with leading or trailing white space (a value read
// from a file, ending in a newline) is hidden trimmed as well. The
// replacer is built once (per reconcile step) and applied
// per message. The zero value and nil hide nothing.
type Redactor struct {
	r *strings.Replacer
}

// NewRedactor returns a Redactor for secrets; strings shorter than
// MinSecretLength are left out.
func NewRedactor(secrets []string) *Redactor {
	forms := map[string]bool{}
	for _, secret := range secrets {
		// A value read from a file usually ends in a newline, which a
		// chart (or a message) trims: both forms are hidden.
		for _, s := range []string{secret, strings.TrimSpace(secret)} {
			if len(s) < MinSecretLength {
				continue
			}
			for _, f := range encodings(s) {
				if len(f) >= MinSecretLength {
					forms[f] = true
				}
			}
		}
	}
	sorted := sortedSecrets(forms) // longest first: at one position the longest form wins
	if len(sorted) == 0 {
		return &Redactor{}
	}
	pairs := make([]string, 0, 2*len(sorted))
	for _, f := range sorted {
		pairs = append(pairs, f, Redacted)
	}
	return &Redactor{r: strings.NewReplacer(pairs...)}
}

// encodings are the forms of s a message may carry.
func encodings(s string) []string {
	b := []byte(s)
	goQuoted := unquote(strconv.Quote(s))
	jsonHTML := JSONEscape(s, true)
	jsonPlain := JSONEscape(s, false)
	return []string{
		s, goQuoted, unquote(strconv.QuoteToASCII(s)), jsonHTML, jsonPlain,
		JSONEscape(jsonHTML, true), JSONEscape(jsonPlain, false), unquote(strconv.Quote(goQuoted)),
		base64.StdEncoding.EncodeToString(b), base64.RawStdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b),
	}
}

func unquote(q string) string { return q[1 : len(q)-1] }

// JSONEscape is s as encoding/json writes it inside a string, quotes off
// (html: with SetEscapeHTML, as json.Marshal does).
func JSONEscape(s string, html bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(s) // a string always encodes
	return unquote(strings.TrimSuffix(buf.String(), "\n"))
}

// Redact returns s with every form of every secret replaced by Redacted.
func (r *Redactor) Redact(s string) string {
	if r == nil || r.r == nil {
		return s
	}
	return r.r.Replace(s)
}

// Error returns err with its message redacted; it still unwraps to err, so
// errors.Is and errors.As see through it.
func (r *Redactor) Error(err error) error {
	if err == nil || r == nil || r.r == nil {
		return err
	}
	msg := r.Redact(err.Error())
	if msg == err.Error() {
		return err
	}
	return &redactedError{msg: msg, err: err}
}

// Redact replaces every secret in s (see Redactor; build one to redact
// many messages).
func Redact(s string, secrets []string) string { return NewRedactor(secrets).Redact(s) }

// RedactError returns err with every secret in its message replaced; it
// still unwraps to err, so errors.Is and errors.As see through it.
func RedactError(err error, secrets []string) error { return NewRedactor(secrets).Error(err) }

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
