package apps_test

import (
	"context"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/apps"
	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

// Freeze stands for a PreRelease hook (the worked example of package hooks).
type Freeze struct{}

func (Freeze) PreRelease(context.Context, hooks.Request, chartutil.Values) (hooks.Result, error) {
	return hooks.Result{}, nil
}

// WebApp is the kind of the example app.
var WebApp = schema.GroupKind{Group: "apps.chartkeeper.dev", Kind: "WebApp"}

func ExampleRegister() {
	// In the app's folder, internal/apps/webapp, from its package's init:
	apps.Register(apps.App{
		Name:  "webapp",
		Kinds: []schema.GroupKind{WebApp},
		Hooks: func(schema.GroupKind) []hooks.Hook {
			return []hooks.Hook{{Name: "freeze", Impl: Freeze{}, Timeout: 5 * time.Second}}
		},
	})

	// chartkeeper run adds the hooks of the kinds watches.yaml names.
	reg := hooks.NewRegistry()
	if err := apps.AddHooks(reg, func(gk schema.GroupKind) bool { return gk == WebApp }); err != nil {
		fmt.Println(err)
	}
	for _, h := range reg.For(WebApp) {
		fmt.Println(h.Name, h.Timeout)
	}
	// Output: freeze 5s
}
