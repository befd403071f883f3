package scaffold

import (
	"bytes"
	"errors"
	"go/format"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// writeHook writes internal/apps/<kind>_hook.go unless it exists: a hook
// that changes nothing yet, registered for the kind, for the author to
// fill in.
func writeHook(o Options, u *undo) (Change, error) {
	rel := filepath.Join("internal", "apps", strings.ToLower(o.Kind)+"_hook.go")
	c := Change{Path: rel, Action: "unchanged"}
	path := filepath.Join(o.ProjectDir, rel)
	if _, err := os.Stat(path); err == nil {
		return c, nil // the author's code now: never overwritten
	} else if !errors.Is(err, fs.ErrNotExist) {
		return c, err
	}
	var b bytes.Buffer
	if err := hookTemplate.Execute(&b, o); err != nil {
		return c, err
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return c, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return c, err
	}
	c.Action = "created"
	u.add(func() error { return os.Remove(path) })
	return c, os.WriteFile(path, src, 0o644)
}

var hookTemplate = template.Must(template.New("hook").Funcs(template.FuncMap{"lower": strings.ToLower}).Parse(`package apps

import (
	"context"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

// {{.Kind}} is the {{.Kind}} kind, packaged with chartkeeper create-api.
var {{.Kind}} = schema.GroupKind{Group: "{{.Group}}", Kind: "{{.Kind}}"}

func init() { registrations = append(registrations, register{{.Kind}}) }

// register{{.Kind}} adds the {{.Kind}} hook when watches.yaml names the kind.
func register{{.Kind}}(r *hooks.Registry, watched func(schema.GroupKind) bool, _ Options) error {
	if !watched({{.Kind}}) {
		return nil
	}
	return r.Add({{.Kind}}, hooks.Hook{Name: "{{lower .Kind}}", Impl: &{{lower .Kind}}Hook{}})
}

// {{lower .Kind}}Hook holds the day-2 logic of {{.Kind}} that its chart
// cannot express. It may also implement hooks.PreRelease,
// hooks.PostRelease and hooks.BeforeUninstall; see docs/hooks.md. A hook
// that reads or writes objects beyond the release declares them with a
// Rules method (hooks.Permissions) so that make manifests grants them.
type {{lower .Kind}}Hook struct{}

// Translate returns the values to release for a {{.Kind}}: the values
// computed so far, unchanged until logic is added here.
func (h *{{lower .Kind}}Hook) Translate(ctx context.Context, req hooks.Request, vals chartutil.Values) (chartutil.Values, error) {
	return vals, nil
}
`))
