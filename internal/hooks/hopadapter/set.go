package hopadapter

import (
	"fmt"

	hophook "github.com/operator-framework/helm-operator-plugins/pkg/hook"
	hopvalues "github.com/operator-framework/helm-operator-plugins/pkg/values"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

// Set is one kind's hooks as a helm-operator-plugins operator registered
// them on its reconciler (WithValueTranslator, WithPreHook, WithPostHook).
// An app hands it over unchanged (apps.App.HelmOperatorHooks).
type Set struct {
	// Translator, if set, computes the values from the custom resource.
	Translator hopvalues.Translator
	// PreHooks run before each install or upgrade, in order.
	PreHooks []hophook.PreHook
	// PostHooks run on every reconcile of the deployed release, in order.
	PostHooks []hophook.PostHook
}

// Hooks returns the set as chartkeeper hooks in helm-operator-plugins'
// order (translator, pre-hooks, post-hooks), named after prefix:
// "<prefix>-translator", "<prefix>-pre-1", "<prefix>-post-1", ...
func (s Set) Hooks(prefix string) []hooks.Hook {
	var out []hooks.Hook
	if s.Translator != nil {
		out = append(out, hooks.Hook{Name: prefix + "-translator", Impl: FromTranslator(s.Translator)})
	}
	for i, h := range s.PreHooks {
		out = append(out, hooks.Hook{Name: fmt.Sprintf("%s-pre-%d", prefix, i+1), Impl: FromPreHook(h)})
	}
	for i, h := range s.PostHooks {
		out = append(out, hooks.Hook{Name: fmt.Sprintf("%s-post-%d", prefix, i+1), Impl: FromPostHook(h)})
	}
	return out
}
