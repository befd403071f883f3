package crdschema

import (
	"regexp"
	"strings"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/chartkeeper/chartkeeper/internal/values"
)

// valuesRef matches a reference into .Values and captures its dotted path.
var valuesRef = regexp.MustCompile(`\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)*)`)

// usage records which values paths a chart's templates use as a whole
// (toYaml .Values.probe, with .Values.x, range .Values.list, index
// .Values "a"): everything under such a path reaches the manifests
// unfiltered, so the CRD must keep its unknown fields.
type usage map[string]bool

// templateUsage scans the templates of ch and of its subcharts (whose
// .Values live under the subchart's key).
func templateUsage(ch *chart.Chart) usage {
	u := usage{}
	u.scan(ch, "")
	return u
}

func (u usage) scan(ch *chart.Chart, prefix string) {
	for _, t := range ch.Templates {
		s := string(t.Data)
		for _, m := range valuesRef.FindAllStringSubmatchIndex(s, -1) {
			end := m[1]
			if end < len(s) && isIdent(s[end]) {
				continue // .ValuesFoo: not a values reference
			}
			u[join(prefix, strings.TrimPrefix(s[m[2]:m[3]], "."))] = true
		}
	}
	for _, sub := range ch.Dependencies() {
		u.scan(sub, join(prefix, values.SubchartKey(ch, sub)))
	}
}

// open reports whether path (dotted, "" for the root) or one of its
// ancestors is used as a whole.
func (u usage) open(path string) bool {
	for {
		if u[path] {
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
