// Package hopadapter runs hooks and translators written for
// operator-framework's helm-operator-plugins (pkg/hook, pkg/values at
// v0.9.1) as chartkeeper hooks, unchanged:
//
//	reg.Add(gk, hooks.Hook{Name: "legacy-pre", Impl: hopadapter.FromPreHook(myPreHook)})
//
// Unlike helm-operator-plugins, their errors are not only logged: they
// surface as a HookFailed condition naming the hook, and a retry with backoff.
// An app registers a whole helm-operator-plugins reconciler's hooks with
// Set (apps.App.HelmOperatorHooks).
package hopadapter

import (
	"context"
	"errors"

	hophook "github.com/operator-framework/helm-operator-plugins/pkg/hook"
	hopvalues "github.com/operator-framework/helm-operator-plugins/pkg/values"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

// FromPreHook runs a helm-operator-plugins PreHook before each install or
// upgrade, with the values about to be released.
func FromPreHook(h hophook.PreHook) hooks.PreRelease { return preHook{h} }

// FromPostHook runs a helm-operator-plugins PostHook on every reconcile of
// the deployed release, with the release decoded from storage.
func FromPostHook(h hophook.PostHook) hooks.PostRelease { return postHook{h} }

// FromTranslator computes the values with a helm-operator-plugins
// Translator: its output replaces the values computed so far, as it
// replaces the spec in helm-operator-plugins.
func FromTranslator(t hopvalues.Translator) hooks.Translator { return translator{t} }

type preHook struct{ h hophook.PreHook }

func (a preHook) PreRelease(_ context.Context, req hooks.Request, vals chartutil.Values) (hooks.Result, error) {
	return hooks.Result{}, a.h.Exec(req.Object.DeepCopy(), vals, req.Log)
}

type postHook struct{ h hophook.PostHook }

func (a postHook) PostRelease(ctx context.Context, req hooks.Request, rel hooks.Release) (hooks.Result, error) {
	if rel.Get == nil {
		return hooks.Result{}, errors.New("the release cannot be read")
	}
	full, err := rel.Get(ctx)
	if err != nil {
		return hooks.Result{}, err
	}
	return hooks.Result{}, a.h.Exec(req.Object.DeepCopy(), *full, req.Log)
}

type translator struct{ t hopvalues.Translator }

func (a translator) Translate(ctx context.Context, req hooks.Request, _ chartutil.Values) (chartutil.Values, error) {
	return a.t.Translate(ctx, req.Object.DeepCopy())
}
