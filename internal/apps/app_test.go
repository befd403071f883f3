package apps

import (
	"context"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	hophook "github.com/operator-framework/helm-operator-plugins/pkg/hook"
	hopvalues "github.com/operator-framework/helm-operator-plugins/pkg/values"
	"helm.sh/helm/v3/pkg/chartutil"
	helmrelease "helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
	"github.com/chartkeeper/chartkeeper/internal/hooks/hopadapter"
)

var (
	kindA = schema.GroupKind{Group: "test", Kind: "A"}
	kindB = schema.GroupKind{Group: "test", Kind: "B"}
)

func noop(args []string, stdout, stderr io.Writer) int { return ExitOK }

func hookNamed(name string) []hooks.Hook {
	return []hooks.Hook{{Name: name, Impl: hooks.TranslatorFunc(func(_ context.Context, _ hooks.Request, v chartutil.Values) (chartutil.Values, error) {
		return v, nil
	})}}
}

func TestAddRejectsMistakes(t *testing.T) {
	var s set
	if err := s.add(App{Name: "first", Kinds: []schema.GroupKind{kindA}, Commands: []Command{{Name: "cmd", Run: noop}}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, want string
		app        App
	}{
		{"no name", "needs a name", App{Kinds: []schema.GroupKind{kindA}}},
		{"no kinds", "serves no kind", App{Name: "x"}},
		{"same name", "registered twice", App{Name: "first", Kinds: []schema.GroupKind{kindB}}},
		{"same command", "command cmd is registered twice", App{Name: "x", Kinds: []schema.GroupKind{kindB}, Commands: []Command{{Name: "cmd", Run: noop}}}},
		{"command without Run", "without a name or Run", App{Name: "x", Kinds: []schema.GroupKind{kindB}, Commands: []Command{{Name: "other"}}}},
	} {
		if err := s.add(tt.app); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", tt.name, err, tt.want)
		}
	}
}

// Apps contribute flags, the hooks of their watched kinds and commands,
// in name order whatever the registration order.
func TestAppsContribute(t *testing.T) {
	var s set
	var bound []string
	for _, a := range []App{
		{Name: "zeta", Kinds: []schema.GroupKind{kindB}, Hooks: func(gk schema.GroupKind) []hooks.Hook { return hookNamed(gk.Kind) }, Flags: func(*flag.FlagSet) { bound = append(bound, "zeta") },
			Commands: []Command{{Name: "z-cmd", Run: noop}}},
		{Name: "alpha", Kinds: []schema.GroupKind{kindA, kindB}, Hooks: func(gk schema.GroupKind) []hooks.Hook { return hookNamed("alpha-" + gk.Kind) },
			Flags: func(*flag.FlagSet) { bound = append(bound, "alpha") }, Commands: []Command{{Name: "a-cmd", Run: noop}}},
		{Name: "plain", Kinds: []schema.GroupKind{kindA}},
	} {
		if err := s.add(a); err != nil {
			t.Fatal(err)
		}
	}
	s.bindFlags(flag.NewFlagSet("test", flag.ContinueOnError))
	if got := strings.Join(bound, ","); got != "alpha,zeta" {
		t.Errorf("flags bound in order %s", got)
	}
	reg := hooks.NewRegistry()
	if err := s.addHooks(reg, func(gk schema.GroupKind) bool { return gk == kindB }); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range reg.For(kindB) {
		names = append(names, h.Name)
	}
	if got := strings.Join(names, ","); got != "alpha-B,B" || reg.For(kindA) != nil {
		t.Errorf("hooks of B %s, of A %v: want alpha's then zeta's, none for the unwatched A", got, reg.For(kindA))
	}
	var cmds []string
	for _, c := range s.commands() {
		cmds = append(cmds, c.Name)
	}
	if got := strings.Join(cmds, ","); got != "a-cmd,z-cmd" {
		t.Errorf("commands %s", got)
	}
	if _, ok := s.command("z-cmd"); !ok {
		t.Error("z-cmd not found")
	}
	if _, ok := s.command("nope"); ok {
		t.Error("an unknown command was found")
	}
}

// An app written for helm-operator-plugins hands over its reconciler's
// hooks unchanged; they run after the app's own, in helm-operator-plugins'
// order, and really call the original hooks.
func TestHelmOperatorHooksRegisterUnchanged(t *testing.T) {
	var ran []string
	legacy := hopadapter.Set{
		Translator: hopvalues.TranslatorFunc(func(context.Context, *unstructured.Unstructured) (chartutil.Values, error) {
			ran = append(ran, "translator")
			return chartutil.Values{"replicas": 2}, nil
		}),
		PreHooks: []hophook.PreHook{hophook.PreHookFunc(func(*unstructured.Unstructured, chartutil.Values, logr.Logger) error {
			ran = append(ran, "pre")
			return nil
		})},
		PostHooks: []hophook.PostHook{hophook.PostHookFunc(func(*unstructured.Unstructured, helmrelease.Release, logr.Logger) error {
			ran = append(ran, "post")
			return nil
		})},
	}
	var s set
	if err := s.add(App{Name: "legacy", Kinds: []schema.GroupKind{kindA},
		Hooks:             func(schema.GroupKind) []hooks.Hook { return hookNamed("own") },
		HelmOperatorHooks: func(schema.GroupKind) hopadapter.Set { return legacy }}); err != nil {
		t.Fatal(err)
	}
	reg := hooks.NewRegistry()
	if err := s.addHooks(reg, func(schema.GroupKind) bool { return true }); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range reg.For(kindA) {
		names = append(names, h.Name)
	}
	if got := strings.Join(names, ","); got != "own,legacy-translator,legacy-pre-1,legacy-post-1" {
		t.Fatalf("hooks %s", got)
	}
	ctx := context.Background()
	req := hooks.Request{Object: &unstructured.Unstructured{Object: map[string]any{}}, Log: logr.Discard()}
	hs := reg.For(kindA)
	if vals, err := hs[1].Impl.(hooks.Translator).Translate(ctx, req, nil); err != nil || vals["replicas"] != 2 {
		t.Errorf("translator: %v %v", vals, err)
	}
	if _, err := hs[2].Impl.(hooks.PreRelease).PreRelease(ctx, req, chartutil.Values{}); err != nil {
		t.Error(err)
	}
	get := func(context.Context) (*helmrelease.Release, error) { return &helmrelease.Release{Name: "r"}, nil }
	if _, err := hs[3].Impl.(hooks.PostRelease).PostRelease(ctx, req, hooks.Release{Get: get}); err != nil {
		t.Error(err)
	}
	if got := strings.Join(ran, ","); got != "translator,pre,post" {
		t.Errorf("ran %s", got)
	}
}
