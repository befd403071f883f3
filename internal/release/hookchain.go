package release

import (
	"context"
	"errors"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

// hookChain runs the ordered hooks of one kind (hooks.Registry.For): each
// call bounded by the hook's Timeout, its logger named after the hook, its
// error wrapped in a *hooks.Error naming the hook and the phase.
type hookChain []hooks.Hook

// Translate runs every Translator in order, each on the previous one's
// output (a nil output counts as empty values).
func (c hookChain) Translate(ctx context.Context, req hooks.Request, vals chartutil.Values) (chartutil.Values, error) {
	for _, h := range c {
		t, ok := h.Impl.(hooks.Translator)
		if !ok {
			continue
		}
		out, err := callHook(ctx, h, hooks.PhaseTranslate, func(ctx context.Context) (chartutil.Values, error) {
			return t.Translate(ctx, withHookLog(req, h), vals)
		})
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = chartutil.Values{}
		}
		vals = out
	}
	return vals, nil
}

// PreRelease runs every PreRelease hook in order.
func (c hookChain) PreRelease(ctx context.Context, req hooks.Request, vals chartutil.Values) (hooks.Result, error) {
	return c.each(ctx, hooks.PhasePreRelease, func(ctx context.Context, h hooks.Hook) (hooks.Result, error) {
		if p, ok := h.Impl.(hooks.PreRelease); ok {
			return p.PreRelease(ctx, withHookLog(req, h), vals)
		}
		return hooks.Result{}, nil
	})
}

// PostRelease runs every PostRelease hook in order.
func (c hookChain) PostRelease(ctx context.Context, req hooks.Request, rel hooks.Release) (hooks.Result, error) {
	return c.each(ctx, hooks.PhasePostRelease, func(ctx context.Context, h hooks.Hook) (hooks.Result, error) {
		if p, ok := h.Impl.(hooks.PostRelease); ok {
			return p.PostRelease(ctx, withHookLog(req, h), rel)
		}
		return hooks.Result{}, nil
	})
}

// BeforeUninstall runs every BeforeUninstall hook in order.
func (c hookChain) BeforeUninstall(ctx context.Context, req hooks.Request) (hooks.Result, error) {
	return c.each(ctx, hooks.PhaseBeforeUninstall, func(ctx context.Context, h hooks.Hook) (hooks.Result, error) {
		if p, ok := h.Impl.(hooks.BeforeUninstall); ok {
			return p.BeforeUninstall(ctx, withHookLog(req, h))
		}
		return hooks.Result{}, nil
	})
}

// each calls fn for every hook, stopping at the first error, and merges
// the results (the soonest requeue wins).
func (c hookChain) each(ctx context.Context, phase string, fn func(context.Context, hooks.Hook) (hooks.Result, error)) (hooks.Result, error) {
	var merged hooks.Result
	for _, h := range c {
		r, err := callHook(ctx, h, phase, func(ctx context.Context) (hooks.Result, error) { return fn(ctx, h) })
		if err != nil {
			return merged, err
		}
		merged = merged.Merge(r)
	}
	return merged, nil
}

// callHook runs one hook call bounded by the hook's timeout and wraps its
// error in a *hooks.Error.
func callHook[T any](ctx context.Context, h hooks.Hook, phase string, fn func(context.Context) (T, error)) (T, error) {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = hooks.DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	begin := time.Now()
	out, err := fn(ctx)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %s: %w", time.Since(begin).Round(time.Millisecond), err)
		}
		return out, &hooks.Error{Hook: h.Name, Phase: phase, Err: err}
	}
	return out, nil
}

// withHookLog is req with a logger naming the hook.
func withHookLog(req hooks.Request, h hooks.Hook) hooks.Request {
	req.Log = req.Log.WithValues("hook", h.Name)
	return req
}
