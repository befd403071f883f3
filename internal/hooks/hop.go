package hooks

import (
	"context"
	"errors"

	hophook "github.com/operator-framework/helm-operator-plugins/pkg/hook"
	hopvalues "github.com/operator-framework/helm-operator-plugins/pkg/values"
	"helm.sh/helm/v3/pkg/chartutil"
)

// Adapters for hooks written for operator-framework's helm-operator-plugins
// (pkg/hook, pkg/values at v0.9.1): register them unchanged, e.g.
//
//	reg.Add(gk, hooks.Hook{Name: "legacy-pre", Impl: hooks.FromHOPPreHook(myPreHook)})
//
// Unlike helm-operator-plugins, their errors are not only logged: they
// surface as a <Hook>HookFailed condition and a retry with backoff.

// FromHOPPreHook runs a helm-operator-plugins PreHook before each install
// or upgrade, with the values about to be released.
func FromHOPPreHook(h hophook.PreHook) PreRelease { return hopPre{h} }

// FromHOPPostHook runs a helm-operator-plugins PostHook on every reconcile
// of the deployed release, with the release decoded from storage.
func FromHOPPostHook(h hophook.PostHook) PostRelease { return hopPost{h} }

// FromHOPTranslator computes the values with a helm-operator-plugins
// Translator: its output replaces the values computed so far, as it
// replaces the spec in helm-operator-plugins.
func FromHOPTranslator(t hopvalues.Translator) Translator { return hopTranslator{t} }

type hopPre struct{ h hophook.PreHook }

func (a hopPre) PreRelease(_ context.Context, req Request, vals chartutil.Values) (Result, error) {
	return Result{}, a.h.Exec(req.Object.DeepCopy(), vals, req.Log)
}

type hopPost struct{ h hophook.PostHook }

func (a hopPost) PostRelease(ctx context.Context, req Request, rel Release) (Result, error) {
	if rel.Get == nil {
		return Result{}, errors.New("the release cannot be read")
	}
	full, err := rel.Get(ctx)
	if err != nil {
		return Result{}, err
	}
	return Result{}, a.h.Exec(req.Object.DeepCopy(), *full, req.Log)
}

type hopTranslator struct{ t hopvalues.Translator }

func (a hopTranslator) Translate(ctx context.Context, req Request, _ chartutil.Values) (chartutil.Values, error) {
	return a.t.Translate(ctx, req.Object.DeepCopy())
}
