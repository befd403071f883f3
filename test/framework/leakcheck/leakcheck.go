package leakcheck

import (
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/chartkeeper/chartkeeper/internal/values"
)

// MinLength is the default shortest value a Set looks for: a shorter one
// ("admin", "true", "5432") occurs by chance in ordinary log lines.
const MinLength = 6

// maxHitsPerForm bounds the leaks reported for one form of one value in
// one text: a value logged on every reconcile is one finding, not a
// thousand.
const maxHitsPerForm = 5

// A Leak is a secret value found where it must not be.
type Leak struct {
	// Where it was found: "operator log line 812", "Event team/db.17f3
	// (Database db, reason UpgradeFailed) message", "Database team/db
	// status.conditions[1].message".
	Where string
	// What the value is: the label it was added with.
	What string
	// Form is how it was written: raw, base64, JSON-escaped, ...
	Form string
	// Excerpt is the text around it (at most 100 bytes either side).
	Excerpt string
}

func (l Leak) String() string {
	return fmt.Sprintf("%s: %s (%s): %s", l.Where, l.What, l.Form, l.Excerpt)
}

// Describe returns the leaks one per line, for a test failure.
func Describe(leaks []Leak) string {
	lines := make([]string, len(leaks))
	for i, l := range leaks {
		lines[i] = l.String()
	}
	return strings.Join(lines, "\n")
}

// Set is the secret values to look for. The zero value is not usable:
// call New.
type Set struct {
	// MinLength: values shorter than this (in bytes) are not added, nor
	// forms of them shorter than it. New sets the package's MinLength.
	MinLength int
	secrets   []secret
	byValue   map[string]int
}

type secret struct {
	what  string
	forms []form
}

type form struct{ name, text string }

// New returns an empty Set with the default MinLength.
func New() *Set { return &Set{MinLength: MinLength, byValue: map[string]int{}} }

// Add adds value, labelled what ("the password the Secret team/db-auth
// gave"). A value shorter than MinLength is skipped (false is returned);
// a value added before keeps its first label.
func (s *Set) Add(what, value string) bool {
	if len(value) < s.MinLength {
		return false
	}
	if _, ok := s.byValue[value]; ok {
		return true
	}
	s.byValue[value] = len(s.secrets)
	s.secrets = append(s.secrets, secret{what: what, forms: s.forms(value)})
	return true
}

// Len is the number of values in the set.
func (s *Set) Len() int { return len(s.secrets) }

// forms are the texts value may appear as, each at least MinLength long,
// without duplicates, longest first within a kind (a padded base64 before
// its raw form, so one occurrence is reported once). The list is the
// checker's own, not the one values.Redactor hides: it is what a log line,
// an Event or a status holds once written (a JSON log line escapes a
// Go-quoted message again), and it is what checks the redactor.
func (s *Set) forms(value string) []form {
	goInner := unquote(strconv.Quote(value))
	jsonHTML, jsonPlain := values.JSONEscape(value, true), values.JSONEscape(value, false)
	b := []byte(value)
	all := []form{
		{"raw", value},
		{"JSON-escaped", jsonHTML},
		{"JSON-escaped", jsonPlain},
		{"Go-quoted", goInner},
		{"Go-quoted, ASCII", unquote(strconv.QuoteToASCII(value))},
		{"JSON-escaped twice", values.JSONEscape(jsonHTML, true)},
		{"JSON-escaped twice", values.JSONEscape(jsonPlain, false)},
		{"Go-quoted, then JSON-escaped", values.JSONEscape(goInner, false)},
		{"Go-quoted, then JSON-escaped", values.JSONEscape(goInner, true)},
		{"base64", base64.StdEncoding.EncodeToString(b)},
		{"base64 (raw)", base64.RawStdEncoding.EncodeToString(b)},
		{"base64url", base64.URLEncoding.EncodeToString(b)},
		{"base64url (raw)", base64.RawURLEncoding.EncodeToString(b)},
	}
	all = append(all, pemLines(value)...)
	seen := map[string]bool{}
	var out []form
	for _, f := range all {
		if len(f.text) < s.MinLength || seen[f.text] {
			continue
		}
		seen[f.text] = true
		out = append(out, f)
	}
	return out
}

// pemLines are the body lines of the PEM blocks in value (a private key,
// a certificate): one of them in a log is a leak of the block.
func pemLines(value string) []form {
	if !strings.Contains(value, "-----BEGIN ") {
		return nil
	}
	var out []form
	for i, line := range strings.Split(value, "\n") {
		line = strings.TrimSpace(line)
		if len(line) < 16 || strings.HasPrefix(line, "-----") || strings.Contains(line, ":") {
			continue // too short to tell, a BEGIN/END line or a PEM header
		}
		out = append(out, form{fmt.Sprintf("PEM line %d", i+1), line})
	}
	return out
}

func unquote(q string) string { return q[1 : len(q)-1] }

// ScanText looks for the values in text (a log, captured output), by line:
// each Leak's Where is "<where> line <n>".
func (s *Set) ScanText(where, text string) []Leak {
	return s.scan(where, text, true)
}

// ScanFile is ScanText over a file (an operator's log file); a missing
// file is an error, not a clean scan.
func (s *Set) ScanFile(path string) ([]Leak, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("leakcheck: %w", err)
	}
	return s.ScanText(path, string(b)), nil
}

// scan looks for every form of every value in text; byLine adds the line
// number of each hit to where.
func (s *Set) scan(where, text string, byLine bool) []Leak {
	var out []Leak
	for _, sec := range s.secrets {
		found := map[int]bool{} // offsets already reported for this value
		for _, f := range sec.forms {
			hits := 0
			for off := 0; hits < maxHitsPerForm; {
				i := strings.Index(text[off:], f.text)
				if i < 0 {
					break
				}
				at := off + i
				off = at + len(f.text)
				if found[at] {
					continue
				}
				found[at] = true
				hits++
				w := where
				if byLine {
					w = fmt.Sprintf("%s line %d", where, strings.Count(text[:at], "\n")+1)
				}
				out = append(out, Leak{Where: w, What: sec.what, Form: f.name, Excerpt: excerpt(text, at, len(f.text))})
			}
		}
	}
	return out
}

// excerpt is the text around text[at:at+n], within its line, at most 100
// bytes either side.
func excerpt(text string, at, n int) string {
	start, end := at-100, at+n+100
	if i := strings.LastIndexByte(text[max(start, 0):at], '\n'); i >= 0 {
		start = max(start, 0) + i + 1
	}
	if i := strings.IndexByte(text[at+n:min(end, len(text))], '\n'); i >= 0 {
		end = at + n + i
	}
	start, end = max(start, 0), min(end, len(text))
	return strings.TrimSpace(text[start:end])
}
