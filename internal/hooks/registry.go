package hooks

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

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

// For returns the hooks of a kind in the order they run (nil registry:
// none). The engine runs them; the slice must not be modified.
func (r *Registry) For(gk schema.GroupKind) []Hook {
	if r == nil {
		return nil
	}
	return slices.Clip(r.byKind[gk])
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
