package hooks_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

// --- the worked example of docs/hooks.md ---

// Freeze holds installs and upgrades while the custom resource carries the
// annotation example.dev/freeze: "true", and counts the releases it let
// through in status.app.releasesAllowed.
type Freeze struct{}

func (Freeze) PreRelease(_ context.Context, req hooks.Request, _ chartutil.Values) (hooks.Result, error) {
	if req.Object.GetAnnotations()["example.dev/freeze"] == "true" {
		return hooks.Result{}, errors.New("releases are frozen (annotation example.dev/freeze)")
	}
	n, _ := req.AppStatus["releasesAllowed"].(int64)
	req.AppStatus["releasesAllowed"] = n + 1
	req.Log.Info("release allowed")
	return hooks.Result{}, nil
}

// --- end of the example ---

func TestWorkedExampleFreeze(t *testing.T) {
	reg := hooks.NewRegistry()
	gk := schema.GroupKind{Group: "apps.chartkeeper.dev", Kind: "WebApp"}
	if err := reg.Add(gk, hooks.Hook{Name: "freeze", Impl: Freeze{}}); err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	req := hooks.Request{Object: obj, Log: logr.Discard(), AppStatus: map[string]any{}}

	if _, err := reg.For(gk).PreRelease(context.Background(), req, chartutil.Values{}); err != nil {
		t.Fatal(err)
	}
	obj.SetAnnotations(map[string]string{"example.dev/freeze": "true"})
	_, err := reg.For(gk).PreRelease(context.Background(), req, chartutil.Values{})
	if err == nil || !strings.Contains(err.Error(), "hook freeze (pre-release): releases are frozen") {
		t.Fatalf("frozen: %v", err)
	}
	if req.AppStatus["releasesAllowed"] != int64(1) {
		t.Errorf("status.app %v", req.AppStatus)
	}
}
