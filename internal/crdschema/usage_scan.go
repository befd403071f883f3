package crdschema

import (
	"strings"
	tparse "text/template/parse"
)

// val is what a template expression may evaluate to, as far as values are
// concerned: subtrees of .Values (dotted paths, "" for .Values itself)
// and/or the context a template is given (., $: the chart's, whose
// .Values is the values root). A val with neither is anything else (a
// string, a number, a function's result).
type val struct {
	paths []string
	ctx   bool
}

func (v val) union(w val) val {
	out := val{ctx: v.ctx || w.ctx, paths: append([]string(nil), v.paths...)}
	for _, p := range w.paths {
		if !containsString(out.paths, p) {
			out.paths = append(out.paths, p)
		}
	}
	return out
}

// scanner walks one parsed template (a file's body or one define), telling
// how each values path is used. It is conservative: a subtree that flows
// anywhere it does not recognise is used whole.
type scanner struct {
	u      usage
	prefix string           // where this chart's values sit
	scopes []map[string]val // variables, innermost last
	// assigns counts assignments ($x = ...), to walk a range body again
	// when one may carry a value into its next iteration.
	assigns int
	// budget bounds the nodes walked (nested ranges walked twice double
	// it); spent, the scan stops and the template is taken by the old scan.
	budget int
}

// scanBudget is the most nodes one template's scan walks.
const scanBudget = 1 << 18

// tree walks a template's body with dot and $ as the chart's context: a
// define is assumed given the context (include "x.labels" .); one given a
// subtree made that subtree whole where it was called.
func (s *scanner) tree(root *tparse.ListNode) {
	s.scopes = []map[string]val{{"$": {ctx: true}}}
	s.list(root, val{ctx: true})
}

func (s *scanner) list(l *tparse.ListNode, dot val) {
	if l == nil {
		return
	}
	s.push()
	defer s.pop()
	for _, n := range l.Nodes {
		s.node(n, dot)
	}
}

func (s *scanner) node(n tparse.Node, dot val) {
	if s.budget--; s.budget < 0 {
		return
	}
	switch n := n.(type) {
	case *tparse.ActionNode:
		v := s.pipe(n.Pipe, dot)
		if len(n.Pipe.Decl) > 0 {
			s.bind(n.Pipe, v)
		} else {
			s.whole(v) // printed: a map or list is written out as it is
		}
	case *tparse.IfNode:
		s.branch(&n.BranchNode, dot, func(v val) { s.list(n.List, dot) })
	case *tparse.WithNode:
		s.branch(&n.BranchNode, dot, func(v val) { s.list(n.List, v) })
	case *tparse.RangeNode:
		s.branch(&n.BranchNode, dot, func(v val) {
			// Every key or element is taken, whatever the user adds: the
			// subtree is used whole, and an element is none of its paths.
			s.whole(v)
			for _, d := range n.Pipe.Decl {
				s.scopes[len(s.scopes)-1][d.Ident[0]] = val{}
			}
			before := s.assigns
			s.list(n.List, val{})
			if s.assigns != before {
				s.list(n.List, val{})
			}
		})
	case *tparse.TemplateNode:
		if n.Pipe != nil {
			s.whole(s.pipe(n.Pipe, dot)) // the callee may do anything with it
		}
	case *tparse.ListNode:
		s.list(n, dot)
	}
}

// branch evaluates an if, with or range header in a scope of its own (its
// variables are seen by both branches), then the body, then else.
func (s *scanner) branch(b *tparse.BranchNode, dot val, body func(val)) {
	s.push()
	defer s.pop()
	v := s.pipe(b.Pipe, dot) // a header only tests the value: no use whole
	s.bind(b.Pipe, v)
	body(v)
	s.list(b.ElseList, dot)
}

func (s *scanner) pipe(p *tparse.PipeNode, dot val) val {
	if p == nil {
		return val{}
	}
	var v val
	for i, c := range p.Cmds {
		if i == 0 {
			v = s.command(c, dot, nil)
		} else {
			piped := v
			v = s.command(c, dot, &piped)
		}
	}
	return v
}

// bind declares or assigns a pipeline's variables.
func (s *scanner) bind(p *tparse.PipeNode, v val) {
	for _, d := range p.Decl {
		name := d.Ident[0]
		if !p.IsAssign {
			s.scopes[len(s.scopes)-1][name] = v
			continue
		}
		s.assigns++
		for i := len(s.scopes) - 1; i >= 0; i-- {
			if old, ok := s.scopes[i][name]; ok {
				s.scopes[i][name] = old.union(v) // either may be used later
				break
			}
		}
	}
}

// command evaluates one command of a pipeline; piped is the previous
// command's value, passed as the last argument.
func (s *scanner) command(c *tparse.CommandNode, dot val, piped *val) val {
	if len(c.Args) == 0 {
		return val{}
	}
	if f, ok := c.Args[0].(*tparse.IdentifierNode); ok {
		return s.call(f.Ident, c.Args[1:], dot, piped)
	}
	v := s.arg(c.Args[0], dot)
	if len(c.Args) == 1 && piped == nil {
		return v
	}
	// A method with arguments (.Files.Get "x", .Capabilities.APIVersions.Has
	// "v"): what it is given goes where this scan cannot see.
	s.whole(v)
	for _, a := range c.Args[1:] {
		s.whole(s.arg(a, dot))
	}
	if piped != nil {
		s.whole(*piped)
	}
	return val{}
}

// arg evaluates an operand.
func (s *scanner) arg(n tparse.Node, dot val) val {
	switch n := n.(type) {
	case *tparse.DotNode:
		return dot
	case *tparse.FieldNode:
		return s.fields(dot, n.Ident)
	case *tparse.VariableNode:
		return s.fields(s.lookup(n.Ident[0]), n.Ident[1:])
	case *tparse.ChainNode:
		return s.fields(s.arg(n.Node, dot), n.Field)
	case *tparse.PipeNode:
		v := s.pipe(n, dot)
		s.bind(n, v)
		return v
	case *tparse.IdentifierNode:
		return s.call(n.Ident, nil, dot, nil) // a function without arguments
	}
	return val{} // a constant
}

// fields follows a field chain: a values path goes one key down per field;
// .Values of the context, or of anything else (a helper given a dict with
// the context in it: .ctx.Values.x), starts at the values root.
func (s *scanner) fields(base val, idents []string) val {
	if len(idents) == 0 {
		return base
	}
	var out val
	for _, p := range base.paths {
		out.paths = append(out.paths, join(p, strings.Join(idents, ".")))
	}
	if base.ctx && len(idents) >= 3 && idents[0] == "Subcharts" && idents[2] == "Values" {
		// .Subcharts.name.Values.x: a subchart's values, under its key.
		out = out.union(val{paths: []string{join(idents[1], strings.Join(idents[3:], "."))}})
		s.read(out)
		return out
	}
	for i, id := range idents {
		if id == "Values" && (base.ctx || i > 0 || len(base.paths) == 0) {
			out = out.union(val{paths: []string{strings.Join(idents[i+1:], ".")}})
			break
		}
	}
	s.read(out)
	return out
}

func (s *scanner) lookup(name string) val {
	for i := len(s.scopes) - 1; i >= 0; i-- {
		if v, ok := s.scopes[i][name]; ok {
			return v
		}
	}
	return val{}
}

func (s *scanner) push() { s.scopes = append(s.scopes, map[string]val{}) }
func (s *scanner) pop()  { s.scopes = s.scopes[:len(s.scopes)-1] }

// whole records the paths of v as used whole. The context is not: handed
// to a helper, its body is scanned itself.
func (s *scanner) whole(v val) {
	for _, p := range v.paths {
		s.u.mark(join(s.prefix, p), true)
	}
}

func (s *scanner) read(v val) {
	for _, p := range v.paths {
		s.u.mark(join(s.prefix, p), false)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
