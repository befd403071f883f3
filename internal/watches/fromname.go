package watches

import (
	"strings"
	"text/template"
	"text/template/parse"
)

// Whoever may create a resource of a kind picks its name. A release
// namespace taken from that name (releaseNamespace: "{{ .Name }}") lets
// them put the release, its valuesFrom reads and its hooks' Secrets in
// any namespace, kube-system included; an account name taken from it in a
// fixed namespace (impersonate.serviceAccount: "platform/{{ .Name }}")
// lets them run as any account of that namespace. Both are refused at
// load unless the watch opts in (allowReleaseNamespaceFromName,
// impersonate.allowServiceAccountFromName). A template that follows the
// resource's namespace is not refused: creating a resource there takes
// rights there.

// fieldAllowReleaseNamespaceFromName is the opt-in's field, as written in
// watches.yaml.
const fieldAllowReleaseNamespaceFromName = "allowReleaseNamespaceFromName"

// validateNamespaceFromName refuses a release namespace template that
// depends on the resource's name, unless the watch allows it.
func (w *Watch) validateNamespaceFromName(add func(field, format string, args ...any)) {
	if w.AllowReleaseNamespaceFromName || w.releaseNamespace == nil || !dependsOnName(w.releaseNamespace, w.Kind) {
		return
	}
	add("releaseNamespace", "%q takes the release namespace from the resource's name: whoever may create a %s would choose the namespace its release, valuesFrom reads and hooks' Secrets go to (kube-system, say); use a fixed namespace or one that follows {{ .Namespace }}, or set %s: true on this watch if everyone who may create one may release into any namespace",
		w.ReleaseNamespace, w.Kind, fieldAllowReleaseNamespaceFromName)
}

// dependsOnName reports whether a name template's output may depend on
// the resource's name: it mentions .Name (or $.Name, $x.Name), or two
// resources that differ only in their name render differently.
func dependsOnName(t *template.Template, kind string) bool {
	if t.Tree != nil && mentionsName(t.Root) {
		return true
	}
	return renderOf(t, NameData{Name: "a", Namespace: "ns-a", Kind: kind}) != renderOf(t, NameData{Name: "b", Namespace: "ns-a", Kind: kind})
}

// renderOf is a template's output for d, or its error's text.
func renderOf(t *template.Template, d NameData) string {
	var b strings.Builder
	if err := t.Execute(&b, d); err != nil {
		return "error: " + err.Error()
	}
	return b.String()
}

// mentionsName reports whether a parse tree refers to a field Name.
func mentionsName(n parse.Node) bool {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return false
		}
		for _, c := range n.Nodes {
			if mentionsName(c) {
				return true
			}
		}
	case *parse.ActionNode:
		return mentionsName(n.Pipe)
	case *parse.PipeNode:
		if n == nil {
			return false
		}
		for _, c := range n.Cmds {
			if mentionsName(c) {
				return true
			}
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			if mentionsName(a) {
				return true
			}
		}
	case *parse.FieldNode:
		return hasName(n.Ident)
	case *parse.VariableNode:
		return hasName(n.Ident)
	case *parse.ChainNode:
		return hasName(n.Field) || mentionsName(n.Node)
	case *parse.IfNode:
		return mentionsName(n.Pipe) || mentionsName(n.List) || mentionsName(n.ElseList)
	case *parse.WithNode:
		return mentionsName(n.Pipe) || mentionsName(n.List) || mentionsName(n.ElseList)
	case *parse.RangeNode:
		return mentionsName(n.Pipe) || mentionsName(n.List) || mentionsName(n.ElseList)
	case *parse.TemplateNode:
		return mentionsName(n.Pipe)
	}
	return false
}

func hasName(idents []string) bool {
	for _, id := range idents {
		if id == "Name" {
			return true
		}
	}
	return false
}
