package release

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// fieldDiff is one field where a live object differs from its released
// form: at Path (a JSON pointer), the released form has Value (Absent: it
// does not set the field, the live object does). It is the smallest
// subtree that differs: a map key missing on one side, an array whose
// length differs, or a differing scalar.
type fieldDiff struct {
	Path   string
	Value  any
	Absent bool
	// InLive: the live object has the field (replace or remove, not add).
	InLive bool
}

// diffFields lists where live differs from want (both as decoded JSON),
// sorted by path.
func diffFields(live, want any) []fieldDiff {
	var out []fieldDiff
	walkDiff("", live, want, &out)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func walkDiff(path string, live, want any, out *[]fieldDiff) {
	switch w := want.(type) {
	case map[string]any:
		l, ok := live.(map[string]any)
		if !ok {
			break
		}
		for k, wv := range w {
			p := path + "/" + escapePointer(k)
			if lv, ok := l[k]; ok {
				walkDiff(p, lv, wv, out)
			} else {
				*out = append(*out, fieldDiff{Path: p, Value: wv})
			}
		}
		for k := range l {
			if _, ok := w[k]; !ok {
				*out = append(*out, fieldDiff{Path: path + "/" + escapePointer(k), Absent: true, InLive: true})
			}
		}
		return
	case []any:
		l, ok := live.([]any)
		if !ok || len(l) != len(w) {
			break
		}
		for i := range w {
			walkDiff(path+"/"+strconv.Itoa(i), l[i], w[i], out)
		}
		return
	}
	if !reflect.DeepEqual(live, want) {
		*out = append(*out, fieldDiff{Path: path, Value: want, InLive: true})
	}
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// under reports whether path is pointer or a field below it.
func under(path, pointer string) bool {
	return path == pointer || strings.HasPrefix(path, pointer+"/")
}

// ignoredPaths returns the paths of the rules that apply to ob.
func ignoredPaths(rules []watches.DriftIgnore, ob object) []string {
	var out []string
	for _, r := range rules {
		if r.Matches(ob.GVK.Group, ob.GVK.Version, ob.GVK.Kind, ob.Namespace, ob.Name) {
			out = append(out, r.Paths...)
		}
	}
	return out
}

// withoutIgnored drops the differences at or below an ignored path.
func withoutIgnored(diffs []fieldDiff, ignored []string) []fieldDiff {
	out := diffs[:0:0]
next:
	for _, d := range diffs {
		for _, p := range ignored {
			if under(d.Path, p) {
				continue next
			}
		}
		out = append(out, d)
	}
	return out
}

// jsonPatch is the RFC 6902 patch that sets each differing field back to
// its released value, and touches nothing else.
func jsonPatch(diffs []fieldDiff) []map[string]any {
	ops := make([]map[string]any, 0, len(diffs))
	for _, d := range diffs {
		switch {
		case d.Absent:
			ops = append(ops, map[string]any{"op": "remove", "path": d.Path})
		case d.InLive:
			ops = append(ops, map[string]any{"op": "replace", "path": d.Path, "value": d.Value})
		default:
			ops = append(ops, map[string]any{"op": "add", "path": d.Path, "value": d.Value})
		}
	}
	return ops
}

// maxDriftFields bounds the fields named per object in messages.
const maxDriftFields = 5

// fieldList names the differing fields, at most maxDriftFields of them.
func fieldList(diffs []fieldDiff) string {
	var b strings.Builder
	for i, d := range diffs {
		if i == maxDriftFields {
			fmt.Fprintf(&b, " and %d more", len(diffs)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(shorten(d.Path, 120, "..."))
	}
	return b.String()
}
