package crdschema

import (
	"strings"
	tparse "text/template/parse"
)

// The functions (Go's, sprig's, Helm's) that read a subtree without taking
// it whole. Any other function given a subtree uses it whole: toYaml,
// toJson, tpl, include, dict, list, merge, keys, printf, quote...
var (
	// passThrough return one of their arguments (default D V, required
	// msg V, coalesce, and, or, ternary A B cond): its use is the result's.
	passThrough = map[string]bool{"default": true, "required": true, "coalesce": true, "and": true, "or": true, "ternary": true}
	// testOnly look only at whether a value is empty, its type or size.
	testOnly = map[string]bool{"not": true, "empty": true, "kindIs": true, "typeIs": true, "typeIsLike": true, "kindOf": true, "typeOf": true, "len": true}
)

// call evaluates a function call; args are its operands, piped the value
// piped into it (its last argument).
func (s *scanner) call(name string, args []tparse.Node, dot val, piped *val) val {
	vals := make([]val, 0, len(args)+1)
	for _, a := range args {
		vals = append(vals, s.arg(a, dot))
	}
	lits := literals(args)
	if piped != nil {
		vals = append(vals, *piped)
		lits = append(lits, literal{}) // a piped value is no constant
	}
	switch {
	case passThrough[name]:
		var out val
		for _, v := range vals {
			out = out.union(v)
		}
		return out
	case testOnly[name]:
		return val{}
	case name == "hasKey" && len(vals) == 2 && lits[1].ok:
		// hasKey M "k": M is read at k.
		s.read(s.down(vals[0], lits[1].s))
		return val{}
	case (name == "index" || name == "get" && len(vals) == 2) && len(vals) >= 1 && allLiteral(lits[1:]):
		// index M "a" "b", get M "a": M's a.b, read by whatever takes it.
		out := vals[0]
		for _, l := range lits[1:] {
			out = s.down(out, l.s)
		}
		s.read(out)
		return out
	case name == "dig" && len(vals) >= 3 && allLiteral(lits[:len(lits)-2]):
		// dig "a" "b" D M: M's a.b, or D.
		out := vals[len(vals)-1]
		for _, l := range lits[:len(lits)-2] {
			out = s.down(out, l.s)
		}
		s.read(out)
		return out.union(vals[len(vals)-2])
	}
	for _, v := range vals {
		s.whole(v)
	}
	return val{}
}

// down goes one key down a value's paths; the context's "Values" key is
// the values root. A key with a dot in it has no dotted path: the subtree
// holding it is used whole.
func (s *scanner) down(v val, key string) val {
	var out val
	if v.ctx && key == "Values" {
		out.paths = append(out.paths, "")
	}
	if strings.Contains(key, ".") || key == "" {
		s.whole(val{paths: v.paths})
		return out
	}
	for _, p := range v.paths {
		out.paths = append(out.paths, join(p, key))
	}
	return out
}

// literal is an argument written as a string constant.
type literal struct {
	s  string
	ok bool
}

func literals(args []tparse.Node) []literal {
	out := make([]literal, len(args))
	for i, a := range args {
		if str, ok := a.(*tparse.StringNode); ok {
			out[i] = literal{s: str.Text, ok: true}
		}
	}
	return out
}

func allLiteral(ls []literal) bool {
	for _, l := range ls {
		if !l.ok {
			return false
		}
	}
	return true
}
