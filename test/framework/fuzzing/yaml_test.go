package fuzzing

import (
	"testing"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// FuzzYAMLString: a quoted string reads back, through the YAML library
// watches.yaml is read with, as the string itself, and is printable ASCII.
func FuzzYAMLString(f *testing.F) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "tab\tnew\nline", "\x00\x7f", "é", "名前", "\U0001F600", "{{ .Name }}: [a, b] # not a comment", "~1/~0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		q := YAMLString(s)
		for i := 0; i < len(q); i++ {
			if q[i] < 0x20 || q[i] >= 0x7f {
				t.Fatalf("YAMLString(%q) = %q: byte %#x is not printable ASCII", s, q, q[i])
			}
		}
		var got string
		if err := yaml.Unmarshal([]byte("v: "+q), &struct{ V *string }{&got}); err != nil {
			t.Fatalf("YAMLString(%q) = %s does not parse: %v", s, q, err)
		}
		if got != s {
			t.Fatalf("YAMLString(%q) = %s reads back as %q", s, q, got)
		}
	})
}
