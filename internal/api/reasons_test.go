package api_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// root is the module root, from internal/api.
const root = "../.."

// Reasons lists exactly the declared Reason constants, each once.
func TestReasonsListsEveryDeclaredReason(t *testing.T) {
	declared := map[string]bool{}
	for _, f := range parseDir(t, filepath.Join(root, "internal", "api")) {
		ast.Inspect(f.file, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || !isIdent(vs.Type, "Reason") {
				return true
			}
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok {
					s, _ := strconv.Unquote(lit.Value)
					declared[s] = true
				}
			}
			return true
		})
	}
	listed := map[string]bool{}
	for _, r := range api.Reasons() {
		if listed[string(r)] {
			t.Errorf("Reasons lists %s twice", r)
		}
		listed[string(r)] = true
		if !declared[string(r)] {
			t.Errorf("Reasons lists %s, not a declared constant", r)
		}
	}
	for r := range declared {
		if !listed[r] {
			t.Errorf("the declared reason %s is missing from Reasons", r)
		}
	}
}

// Every reason is documented in docs/conditions.md.
func TestEveryReasonIsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "conditions.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range api.Reasons() {
		if !strings.Contains(string(doc), "`"+string(r)+"`") {
			t.Errorf("docs/conditions.md does not document the reason %s", r)
		}
	}
}

// No product code emits a reason it built itself: a condition's Reason
// is string(r) of an api.Reason r, the event helper is given an api.Reason
// (a constant of api or a value carried from one), no string literal or
// concatenation is used where a Reason goes, and nothing outside api
// converts to api.Reason.
func TestReasonsAreNeverBuilt(t *testing.T) {
	var files []parsed
	for _, dir := range []string{"internal", "cmd"} {
		files = append(files, parseTree(t, filepath.Join(root, dir))...)
	}
	// Functions with a parameter of type api.Reason (or Reason in api), by
	// name: the index of that parameter.
	takesReason := map[string][]int{}
	for _, f := range files {
		for _, d := range f.file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			i := 0
			for _, p := range fd.Type.Params.List {
				n := max(len(p.Names), 1)
				if f.isReasonType(p.Type) {
					for k := range n {
						takesReason[fd.Name.Name] = append(takesReason[fd.Name.Name], i+k)
					}
				}
				i += n
			}
		}
	}
	for _, f := range files {
		bad := func(n ast.Node, what string) {
			t.Errorf("%s: %s", f.fset.Position(n.Pos()), what)
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				for _, el := range n.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if !ok || !isIdent(kv.Key, "Reason") {
						continue
					}
					if built(kv.Value) {
						bad(kv, "a Reason built from a literal or concatenation")
					}
					if f.isCondition(n.Type) && !isStringOfName(kv.Value) {
						bad(kv, "a condition's Reason must be string(r) of an api.Reason r")
					}
				}
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && sel.Sel.Name == "Reason" && i < len(n.Rhs) && built(n.Rhs[i]) {
						bad(n, "a Reason assigned from a literal or concatenation")
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && f.pkg != "api" && isIdent(sel.X, f.apiName) && sel.Sel.Name == "Reason" {
					bad(n, "a conversion to api.Reason outside package api")
				}
				name := ""
				switch fun := n.Fun.(type) {
				case *ast.Ident:
					name = fun.Name
				case *ast.SelectorExpr:
					name = fun.Sel.Name
				}
				for _, i := range takesReason[name] {
					if i < len(n.Args) && built(n.Args[i]) {
						bad(n.Args[i], "a reason argument built from a literal or concatenation")
					}
				}
				if name == "Eventf" && len(n.Args) > 3 && !isStringOfName(n.Args[3]) {
					bad(n.Args[3], "an Event's reason must be string(r) of an api.Reason r")
				}
			}
			return true
		})
	}
	if len(takesReason["event"]) == 0 || len(takesReason["setCondition"]) == 0 {
		t.Errorf("the event helper and setCondition should take an api.Reason: %v", takesReason)
	}
}

type parsed struct {
	fset    *token.FileSet
	file    *ast.File
	pkg     string
	apiName string // the name internal/api is imported as ("" if not)
	metav1  string // the name of k8s.io/apimachinery/pkg/apis/meta/v1
}

func (p parsed) isReasonType(e ast.Expr) bool {
	if p.pkg == "api" {
		return isIdent(e, "Reason")
	}
	sel, ok := e.(*ast.SelectorExpr)
	return ok && p.apiName != "" && isIdent(sel.X, p.apiName) && sel.Sel.Name == "Reason"
}

func (p parsed) isCondition(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	return ok && p.metav1 != "" && isIdent(sel.X, p.metav1) && sel.Sel.Name == "Condition"
}

// built reports a string literal or a concatenation.
func built(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING
	case *ast.BinaryExpr:
		return e.Op == token.ADD
	case *ast.ParenExpr:
		return built(e.X)
	}
	return false
}

// isStringOfName reports string(x) of a name (x or a.b).
func isStringOfName(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok || !isIdent(c.Fun, "string") || len(c.Args) != 1 {
		return false
	}
	switch c.Args[0].(type) {
	case *ast.Ident, *ast.SelectorExpr:
		return true
	}
	return false
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// parseTree parses the non-test Go files under dir.
func parseTree(t *testing.T, dir string) []parsed {
	var out []parsed
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		out = append(out, parseDir(t, path)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func parseDir(t *testing.T, dir string) []parsed {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []parsed
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		p := parsed{fset: fset, file: f, pkg: f.Name.Name}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			switch path {
			case "github.com/chartkeeper/chartkeeper/internal/api":
				p.apiName = name
			case "k8s.io/apimachinery/pkg/apis/meta/v1":
				p.metav1 = name
			}
		}
		out = append(out, p)
	}
	return slices.Clip(out)
}
