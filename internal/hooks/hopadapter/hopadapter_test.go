package hopadapter_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-logr/logr"
	hophook "github.com/operator-framework/helm-operator-plugins/pkg/hook"
	hopvalues "github.com/operator-framework/helm-operator-plugins/pkg/values"
	"helm.sh/helm/v3/pkg/chartutil"
	helmrelease "helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
	"github.com/chartkeeper/chartkeeper/internal/hooks/hopadapter"
)

func request() hooks.Request {
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(3)}}}
	return hooks.Request{Object: obj, Log: logr.Discard()}
}

// The adapted hooks get a copy of the resource (their changes are not
// seen by the engine) and what their helm-operator-plugins interface
// promises; their errors are returned.
func TestAdapters(t *testing.T) {
	ctx := context.Background()
	req := request()
	boom := errors.New("boom")

	tr := hopadapter.FromTranslator(hopvalues.TranslatorFunc(func(_ context.Context, u *unstructured.Unstructured) (chartutil.Values, error) {
		u.Object["spec"] = "changed"
		return chartutil.Values{"replicas": 3}, nil
	}))
	vals, err := tr.Translate(ctx, req, chartutil.Values{"earlier": true})
	if err != nil || len(vals) != 1 || vals["replicas"] != 3 {
		t.Errorf("translator: %v %v, want its output alone", vals, err)
	}

	var preSaw chartutil.Values
	pre := hopadapter.FromPreHook(hophook.PreHookFunc(func(_ *unstructured.Unstructured, v chartutil.Values, _ logr.Logger) error {
		preSaw = v
		return boom
	}))
	if _, err := pre.PreRelease(ctx, req, chartutil.Values{"replicas": 3}); !errors.Is(err, boom) || preSaw["replicas"] != 3 {
		t.Errorf("pre hook: %v, saw %v", err, preSaw)
	}

	var postSaw string
	post := hopadapter.FromPostHook(hophook.PostHookFunc(func(_ *unstructured.Unstructured, rel helmrelease.Release, _ logr.Logger) error {
		postSaw = rel.Name
		return nil
	}))
	if _, err := post.PostRelease(ctx, req, hooks.Release{Name: "app"}); err == nil {
		t.Error("post hook without a way to read the release succeeded")
	}
	get := func(context.Context) (*helmrelease.Release, error) { return &helmrelease.Release{Name: "app"}, nil }
	if _, err := post.PostRelease(ctx, req, hooks.Release{Name: "app", Get: get}); err != nil || postSaw != "app" {
		t.Errorf("post hook: %v, saw release %q", err, postSaw)
	}
	if req.Object.Object["spec"] == "changed" {
		t.Error("the translator changed the engine's resource")
	}
}
