package hooks_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// quoted finds the code blocks of a Markdown file marked as quotes of a
// Go file: a line "<!-- quote: path/to/file.go -->" right before the fence.
var quoted = regexp.MustCompile("(?m)^<!-- quote: (\\S+) -->\n```go\n((?s:.*?))```\n")

// The code of docs/hooks.md is the code of the runnable examples: each
// block marked as a quote appears in the file it names (its lines possibly
// indented by tabs there, as in a function body).
func TestDocsQuoteTheExamples(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "hooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := quoted.FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < 4 {
		t.Fatalf("docs/hooks.md quotes %d examples, want at least 4 (marked <!-- quote: FILE -->)", len(blocks))
	}
	for _, b := range blocks {
		src, err := os.ReadFile(filepath.Join(root, b[1]))
		if err != nil {
			t.Errorf("docs/hooks.md quotes %s: %v", b[1], err)
			continue
		}
		if !containsIndented(string(src), b[2]) {
			t.Errorf("docs/hooks.md has drifted from %s; the quote\n%s\nis not in it", b[1], b[2])
		}
	}
}

// containsIndented reports whether src holds block, its non-empty lines
// indented by the same number of tabs (none to three).
func containsIndented(src, block string) bool {
	lines := strings.Split(block, "\n")
	for depth := range 4 {
		indented := make([]string, len(lines))
		for i, l := range lines {
			if l != "" {
				l = strings.Repeat("\t", depth) + l
			}
			indented[i] = l
		}
		if strings.Contains(src, strings.Join(indented, "\n")) {
			return true
		}
	}
	return false
}
