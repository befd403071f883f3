// Command hookfail is chartkeeper with one more app, for the end-to-end
// tests of deletion: the App kind gets a BeforeUninstall hook, "backup",
// that always fails, as a backup to an unreachable target would.
package main

import (
	"context"
	"errors"
	"os"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/apps"
	"github.com/chartkeeper/chartkeeper/internal/cli"
	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

func init() {
	apps.Register(apps.App{
		Name:  "backup",
		Kinds: []schema.GroupKind{{Group: "test.chartkeeper.dev", Kind: "App"}},
		Hooks: func(schema.GroupKind) []hooks.Hook {
			return []hooks.Hook{{Name: "backup", Impl: hooks.BeforeUninstallFunc(
				func(context.Context, hooks.Request) (hooks.Result, error) {
					return hooks.Result{}, errors.New("backup target unreachable")
				})}}
		},
	})
}

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
