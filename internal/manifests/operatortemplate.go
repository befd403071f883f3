package manifests

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Tokens that stand for the release's name and namespace in the objects
// the operator chart templates.
const (
	releaseToken   = "__release__"
	namespaceToken = "__namespace__"
)

// chartTemplate turns API objects into Helm templates: the object is built
// with tokens where the template goes (inline: a value; block: a map key
// whose line becomes an indented include/toYaml), marshalled as YAML, its
// literal "{{" escaped, then each token replaced by its template.
type chartTemplate struct {
	inline map[string]string
	block  map[string]string
}

func newChartTemplate() *chartTemplate {
	return &chartTemplate{
		inline: map[string]string{releaseToken: "{{ .Release.Name }}", namespaceToken: "{{ .Release.Namespace }}"},
		block:  map[string]string{},
	}
}

// Inline returns a token for a value the template expression expr yields.
func (c *chartTemplate) Inline(expr string) string {
	tok := fmt.Sprintf("__tpl%d__", len(c.inline)+len(c.block))
	c.inline[tok] = expr
	return tok
}

// Block returns a map with one token key whose line becomes expr's output
// (YAML lines) indented where the key was.
func (c *chartTemplate) Block(expr string) map[string]any {
	tok := fmt.Sprintf("__tpl%d__", len(c.inline)+len(c.block))
	c.block[tok] = expr
	return map[string]any{tok: ""}
}

// blockLine matches the line of a block token.
var blockLine = regexp.MustCompile(`(?m)^( *)(__tpl\d+__): ""$`)

// Render returns the template of obj (an API object or a map), with the
// generated-file header, wrapped in {{- if cond }} when cond is set.
func (c *chartTemplate) Render(obj any, cond string) ([]byte, error) {
	m, ok := obj.(map[string]any)
	if !ok {
		var err error
		if m, err = toMap(obj); err != nil {
			return nil, err
		}
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return nil, err
	}
	s := strings.ReplaceAll(string(b), "{{", `{{ "{{" }}`)
	s = blockLine.ReplaceAllStringFunc(s, func(line string) string {
		g := blockLine.FindStringSubmatch(line)
		return fmt.Sprintf("%s{{- %s | nindent %d }}", g[1], c.block[g[2]], len(g[1]))
	})
	toks := make([]string, 0, len(c.inline))
	for t := range c.inline {
		toks = append(toks, t)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(toks))) // __tpl10__ before __tpl1__
	for _, t := range toks {
		s = strings.ReplaceAll(s, t, c.inline[t])
	}
	if cond != "" {
		s = "{{- if " + cond + " }}\n" + s + "{{- end }}\n"
	}
	return []byte(header + s), nil
}

// toMap converts an API object to a map without status and empty
// creationTimestamps.
func toMap(obj any) (map[string]any, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	delete(m, "status")
	dropNullTimestamps(m)
	return m, nil
}

// dropNullTimestamps removes every null creationTimestamp under v.
func dropNullTimestamps(v any) {
	switch x := v.(type) {
	case map[string]any:
		if ts, ok := x["creationTimestamp"]; ok && ts == nil {
			delete(x, "creationTimestamp")
		}
		for _, e := range x {
			dropNullTimestamps(e)
		}
	case []any:
		for _, e := range x {
			dropNullTimestamps(e)
		}
	}
}
