package hooks

import (
	"context"

	"helm.sh/helm/v3/pkg/chartutil"
)

// Each function type implements its interface (checked at compile time).
var (
	_ Translator      = TranslatorFunc(nil)
	_ PreRelease      = PreReleaseFunc(nil)
	_ PostRelease     = PostReleaseFunc(nil)
	_ BeforeUninstall = BeforeUninstallFunc(nil)
)

// TranslatorFunc is a Translator written as a function, as
// http.HandlerFunc is a Handler.
type TranslatorFunc func(ctx context.Context, req Request, vals chartutil.Values) (chartutil.Values, error)

// Translate calls f.
func (f TranslatorFunc) Translate(ctx context.Context, req Request, vals chartutil.Values) (chartutil.Values, error) {
	return f(ctx, req, vals)
}

// PreReleaseFunc is a PreRelease hook written as a function.
type PreReleaseFunc func(ctx context.Context, req Request, vals chartutil.Values) (Result, error)

// PreRelease calls f.
func (f PreReleaseFunc) PreRelease(ctx context.Context, req Request, vals chartutil.Values) (Result, error) {
	return f(ctx, req, vals)
}

// PostReleaseFunc is a PostRelease hook written as a function.
type PostReleaseFunc func(ctx context.Context, req Request, rel Release) (Result, error)

// PostRelease calls f.
func (f PostReleaseFunc) PostRelease(ctx context.Context, req Request, rel Release) (Result, error) {
	return f(ctx, req, rel)
}

// BeforeUninstallFunc is a BeforeUninstall hook written as a function.
type BeforeUninstallFunc func(ctx context.Context, req Request) (Result, error)

// BeforeUninstall calls f.
func (f BeforeUninstallFunc) BeforeUninstall(ctx context.Context, req Request) (Result, error) {
	return f(ctx, req)
}

var (
	_ Translator      = TranslatorFunc(nil)
	_ PreRelease      = PreReleaseFunc(nil)
	_ PostRelease     = PostReleaseFunc(nil)
	_ BeforeUninstall = BeforeUninstallFunc(nil)
)
