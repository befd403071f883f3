package crdschema

import (
	"regexp"
	"sort"
	"strings"
	tparse "text/template/parse"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/chartkeeper/chartkeeper/internal/values"
)

// usage records the values paths (dotted, "" for the root) a chart's
// templates read: true where a path is used as a whole (toYaml
// .Values.probe, with .Values.x { toYaml . }, range .Values.list, a
// subtree handed to include or tpl), false where it is only read, field
// by field (.Values.x.y, hasKey .Values.x "k", index .Values "x" "k").
// Everything under a path used whole reaches the manifests unfiltered, so
// the CRD keeps its unknown fields; a map only read field by field is
// typed from values.yaml, with the keys the templates read that
// values.yaml lacks taking any value (children).
type usage struct {
	paths map[string]bool
	// subcharts are the paths where subcharts' values begin.
	subcharts map[string]bool
}

// templateUsage scans the templates of ch and of its subcharts (whose
// .Values live under the subchart's key). A library chart's templates are
// helpers its parent includes with its own context: they are scanned as
// the parent's.
func templateUsage(ch *chart.Chart) usage {
	u := usage{paths: map[string]bool{}, subcharts: map[string]bool{}}
	u.scan(ch, "", "")
	return u
}

// scan reads the templates of ch, whose values are at prefix, as reading
// the values at tmplPrefix.
func (u usage) scan(ch *chart.Chart, prefix, tmplPrefix string) {
	for _, t := range ch.Templates {
		if !u.scanParsed(t.Name, string(t.Data), tmplPrefix) {
			u.scanText(string(t.Data), tmplPrefix)
		}
	}
	for _, sub := range ch.Dependencies() {
		key := join(prefix, values.SubchartKey(ch, sub))
		u.subcharts[key] = true
		tp := key
		if sub.Metadata != nil && sub.Metadata.Type == "library" {
			tp = tmplPrefix
		}
		u.scan(sub, key, tp)
	}
}

// scanParsed reads a template with Go's template parser (as Helm parses
// it; any function name is taken), each defined template with its dot as
// the chart's context. It reports false when the template does not tparse.
func (u usage) scanParsed(name, text, prefix string) bool {
	trees := map[string]*tparse.Tree{}
	t := tparse.New(name)
	t.Mode = tparse.SkipFuncCheck
	if _, err := t.Parse(text, "", "", trees); err != nil {
		return false
	}
	names := make([]string, 0, len(trees))
	for n := range trees {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if tr := trees[n]; tr != nil && tr.Root != nil {
			s := &scanner{u: u, prefix: prefix, budget: scanBudget}
			if s.tree(tr.Root); s.budget < 0 {
				return false
			}
		}
	}
	return true
}

// valuesRef matches a reference into .Values and captures its dotted path.
var valuesRef = regexp.MustCompile(`\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)*)`)

// scanText is the fallback for a template Go's parser refuses (Helm would
// refuse it too, when rendering): every .Values reference is taken as a
// use of its path whole.
func (u usage) scanText(s, prefix string) {
	for _, m := range valuesRef.FindAllStringSubmatchIndex(s, -1) {
		end := m[1]
		if end < len(s) && isIdent(s[end]) {
			continue // .ValuesFoo: not a values reference
		}
		u.mark(join(prefix, strings.TrimPrefix(s[m[2]:m[3]], ".")), true)
	}
}

// mark records a use of path; a use whole is never downgraded to a read.
func (u usage) mark(path string, whole bool) {
	u.paths[path] = whole || u.paths[path]
}

// open reports whether path (dotted, "" for the root) or one of its
// ancestors is used as a whole.
func (u usage) open(path string) bool {
	for {
		if u.paths[path] {
			return true
		}
		if path == "" {
			return false
		}
		i := strings.LastIndexByte(path, '.')
		if i < 0 {
			path = ""
		} else {
			path = path[:i]
		}
	}
}

// children returns, sorted, the keys directly under path that the
// templates read (themselves or below them), but not the keys where a
// subchart's values begin, nor a chart's "global".
func (u usage) children(path string) []string {
	seen := map[string]bool{}
	for p := range u.paths {
		rest, ok := p, path == ""
		if !ok {
			rest, ok = strings.CutPrefix(p, path+".")
		}
		if !ok || rest == "" {
			continue
		}
		key, _, _ := strings.Cut(rest, ".")
		child := join(path, key)
		if u.chartRoot(child) || key == "global" && u.chartRoot(path) {
			continue
		}
		seen[key] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// reads reports whether the templates read path or something under it.
func (u usage) reads(path string) bool {
	for p := range u.paths {
		if p == path || strings.HasPrefix(p, path+".") {
			return true
		}
	}
	return false
}

// chartRoot reports whether path is where a chart's values begin: the
// root, or a subchart's key.
func (u usage) chartRoot(path string) bool {
	return path == "" || u.subcharts[path]
}

func join(prefix, key string) string {
	switch {
	case prefix == "":
		return key
	case key == "":
		return prefix
	default:
		return prefix + "." + key
	}
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
