package hooks_test

import (
	"context"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

var identity = hooks.TranslatorFunc(func(_ context.Context, _ hooks.Request, v chartutil.Values) (chartutil.Values, error) {
	return v, nil
})

func TestRegistryValidatesAndOrders(t *testing.T) {
	gk := schema.GroupKind{Group: "g", Kind: "K"}
	r := hooks.NewRegistry()
	for _, tt := range []struct {
		name string
		hook hooks.Hook
	}{
		{"no name", hooks.Hook{Impl: identity}},
		{"no hook interface", hooks.Hook{Name: "nothing", Impl: 42}},
	} {
		if err := r.Add(gk, tt.hook); err == nil {
			t.Errorf("%s: accepted", tt.name)
		}
	}
	if err := r.Add(gk, hooks.Hook{Name: "first", Impl: identity}, hooks.Hook{Name: "second", Impl: identity, Timeout: 1}); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(gk, hooks.Hook{Name: "first", Impl: identity}); err == nil {
		t.Error("a duplicate name was accepted")
	}
	got := r.For(gk)
	if len(got) != 2 || got[0].Name != "first" || got[1].Name != "second" {
		t.Fatalf("hooks %+v, want first then second", got)
	}
	if got[0].Timeout != hooks.DefaultTimeout || got[1].Timeout != 1 {
		t.Errorf("timeouts %s, %s: want the default for a hook without one", got[0].Timeout, got[1].Timeout)
	}
	if r.For(schema.GroupKind{Kind: "Other"}) != nil || (*hooks.Registry)(nil).For(gk) != nil {
		t.Error("a kind without hooks has hooks")
	}
}
