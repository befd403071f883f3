package hooks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"maps"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Registry holds the hooks of each kind, in the order they run.
type Registry struct {
	byKind map[schema.GroupKind][]Hook
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byKind: map[schema.GroupKind][]Hook{}} }

// Add appends hooks to a kind; they run in the order added. It rejects a
// hook without a name or implementing none of the hook interfaces, and a
// name used twice for one kind.
func (r *Registry) Add(gk schema.GroupKind, hs ...Hook) error {
	for _, h := range hs {
		if h.Name == "" {
			return errors.New("hooks: a hook needs a name")
		}
		switch h.Impl.(type) {
		case Translator, PreRelease, PostRelease, BeforeUninstall:
		default:
			return fmt.Errorf("hooks: %s implements no hook interface", h.Name)
		}
		for _, o := range r.byKind[gk] {
			if o.Name == h.Name {
				return fmt.Errorf("hooks: %s is registered twice for %s", h.Name, gk)
			}
		}
		if h.Timeout <= 0 {
			h.Timeout = DefaultTimeout
		}
		r.byKind[gk] = append(r.byKind[gk], h)
	}
	return nil
}

// For returns the hooks of a kind (nil registry: none).
func (r *Registry) For(gk schema.GroupKind) Chain {
	if r == nil {
		return nil
	}
	return r.byKind[gk]
}

// Permissions is implemented by a hook that needs API access beyond the
// chart's own objects; the generated ClusterRole includes its rules.
type Permissions interface {
	Rules() []rbacv1.PolicyRule
}

// Rules returns the rules every registered hook asks for.
func (r *Registry) Rules() []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, gk := range slices.SortedFunc(maps.Keys(r.byKind), func(a, b schema.GroupKind) int { return strings.Compare(a.String(), b.String()) }) {
		for _, h := range r.byKind[gk] {
			if p, ok := h.Impl.(Permissions); ok {
				out = append(out, p.Rules()...)
			}
		}
	}
	return out
}

// ImageUser is implemented by a hook that puts images of its own into
// released Pods (not from the chart's values): `chartkeeper images`
// lists them with the charts' images.
type ImageUser interface {
	Images() []string
}

// Images returns the images registered hooks of gk release.
func (r *Registry) Images(gk schema.GroupKind) []string {
	var out []string
	for _, h := range r.byKind[gk] {
		if u, ok := h.Impl.(ImageUser); ok {
			out = append(out, u.Images()...)
		}
	}
	return out
}

// Chain is the ordered hooks of one kind.
type Chain []Hook

func call[T any](ctx context.Context, h Hook, phase string, fn func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, h.Timeout)
	defer cancel()
	begin := time.Now()
	out, err := fn(ctx)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %s: %w", time.Since(begin).Round(time.Millisecond), err)
		}
		return out, &Error{Hook: h.Name, Phase: phase, Err: err}
	}
	return out, nil
}

// Translate runs every Translator in order.
func (c Chain) Translate(ctx context.Context, req Request, vals chartutil.Values) (chartutil.Values, error) {
	for _, h := range c {
		t, ok := h.Impl.(Translator)
		if !ok {
			continue
		}
		out, err := call(ctx, h, PhaseTranslate, func(ctx context.Context) (chartutil.Values, error) {
			return t.Translate(ctx, req.withLog(h), vals)
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
func (c Chain) PreRelease(ctx context.Context, req Request, vals chartutil.Values) (Result, error) {
	return c.each(ctx, PhasePreRelease, func(ctx context.Context, h Hook) (Result, bool, error) {
		p, ok := h.Impl.(PreRelease)
		if !ok {
			return Result{}, false, nil
		}
		r, err := p.PreRelease(ctx, req.withLog(h), vals)
		return r, true, err
	})
}

// PostRelease runs every PostRelease hook in order.
func (c Chain) PostRelease(ctx context.Context, req Request, rel Release) (Result, error) {
	return c.each(ctx, PhasePostRelease, func(ctx context.Context, h Hook) (Result, bool, error) {
		p, ok := h.Impl.(PostRelease)
		if !ok {
			return Result{}, false, nil
		}
		r, err := p.PostRelease(ctx, req.withLog(h), rel)
		return r, true, err
	})
}

// BeforeUninstall runs every BeforeUninstall hook in order.
func (c Chain) BeforeUninstall(ctx context.Context, req Request) (Result, error) {
	return c.each(ctx, PhaseBeforeUninstall, func(ctx context.Context, h Hook) (Result, bool, error) {
		p, ok := h.Impl.(BeforeUninstall)
		if !ok {
			return Result{}, false, nil
		}
		r, err := p.BeforeUninstall(ctx, req.withLog(h))
		return r, true, err
	})
}

// each calls fn for every hook, stopping at the first error, and merges
// the results (the soonest requeue wins).
func (c Chain) each(ctx context.Context, phase string, fn func(context.Context, Hook) (Result, bool, error)) (Result, error) {
	var merged Result
	for _, h := range c {
		r, err := call(ctx, h, phase, func(ctx context.Context) (Result, error) {
			r, _, err := fn(ctx, h)
			return r, err
		})
		if err != nil {
			return merged, err
		}
		merged = merged.Merge(r)
	}
	return merged, nil
}

// Merge keeps the soonest positive requeue of two results.
func (r Result) Merge(o Result) Result {
	if o.RequeueAfter > 0 && (r.RequeueAfter == 0 || o.RequeueAfter < r.RequeueAfter) {
		r.RequeueAfter = o.RequeueAfter
	}
	return r
}

func (req Request) withLog(h Hook) Request {
	req.Log = req.Log.WithValues("hook", h.Name)
	return req
}
