package watches

import (
	"strings"
	"testing"
)

// parseOneField parses a watches file of one entry (kind Foo) with field
// added (YAML lines indented by two spaces). With wantErrs, the parse must
// fail with an error saying each of them, and ok is false; without, it
// must succeed and the entry is returned.
func parseOneField(t *testing.T, field string, wantErrs ...string) (w Watch, ok bool) {
	t.Helper()
	ws, err := Parse([]byte("- version: v1\n  kind: Foo\n  chart: chart\n"+field), "testdata")
	if len(wantErrs) > 0 {
		if err == nil {
			t.Fatalf("loaded; want an error saying %q", wantErrs)
		}
		for _, want := range wantErrs {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
		return Watch{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return ws[0], true
}

// nonEmpty is s as a list, empty when s is.
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
