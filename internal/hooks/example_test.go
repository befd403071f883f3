package hooks_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

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

// The worked example of docs/hooks.md: Freeze lets a release through,
// then holds the next one once the annotation is set.
func Example_freeze() {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	req := hooks.Request{Object: obj, Log: logr.Discard(), AppStatus: map[string]any{}}

	_, err := Freeze{}.PreRelease(context.Background(), req, chartutil.Values{})
	fmt.Println(err, req.AppStatus["releasesAllowed"])

	obj.SetAnnotations(map[string]string{"example.dev/freeze": "true"})
	_, err = Freeze{}.PreRelease(context.Background(), req, chartutil.Values{})
	fmt.Println(err, req.AppStatus["releasesAllowed"])
	// Output:
	// <nil> 1
	// releases are frozen (annotation example.dev/freeze) 1
}

func ExampleTranslatorFunc() {
	// replicas sets the chart's replicaCount from the resource's spec.size.
	replicas := hooks.TranslatorFunc(func(_ context.Context, req hooks.Request, vals chartutil.Values) (chartutil.Values, error) {
		size, found, err := unstructured.NestedInt64(req.Object.Object, "spec", "size")
		if err != nil || !found {
			return nil, fmt.Errorf("spec.size: found %t, %v", found, err)
		}
		vals["replicaCount"] = size
		return vals, nil
	})

	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"size": int64(3)}}}
	vals, err := replicas.Translate(context.Background(), hooks.Request{Object: obj}, chartutil.Values{"image": "web:1.2"})
	fmt.Println(vals, err)
	// Output: map[image:web:1.2 replicaCount:3] <nil>
}

func ExamplePostReleaseFunc() {
	// poll asks for a reconcile every minute once the release has rolled.
	poll := hooks.PostReleaseFunc(func(_ context.Context, req hooks.Request, rel hooks.Release) (hooks.Result, error) {
		if !rel.Ready {
			return hooks.Result{}, nil
		}
		req.AppStatus["revision"] = rel.Revision
		return hooks.Result{RequeueAfter: time.Minute}, nil
	})

	req := hooks.Request{AppStatus: map[string]any{}}
	res, err := poll.PostRelease(context.Background(), req, hooks.Release{Name: "web", Revision: 4, Ready: true})
	fmt.Println(res.RequeueAfter, req.AppStatus, err)
	// Output: 1m0s map[revision:4] <nil>
}

func ExampleRegistry_Add() {
	webApp := schema.GroupKind{Group: "apps.chartkeeper.dev", Kind: "WebApp"}
	reg := hooks.NewRegistry()
	err := reg.Add(webApp,
		hooks.Hook{Name: "freeze", Impl: Freeze{}, Timeout: 5 * time.Second},
		hooks.Hook{Name: "final-backup", Impl: hooks.BeforeUninstallFunc(func(context.Context, hooks.Request) (hooks.Result, error) {
			return hooks.Result{}, nil // take the backup here
		})},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, h := range reg.For(webApp) {
		fmt.Println(h.Name, h.Timeout)
	}
	// A hook that implements no phase is refused.
	fmt.Println(reg.Add(webApp, hooks.Hook{Name: "nothing", Impl: struct{}{}}))
	// Output:
	// freeze 5s
	// final-backup 30s
	// hooks: nothing implements no hook interface
}

func ExampleError() {
	err := error(&hooks.Error{Hook: "freeze", Phase: hooks.PhasePreRelease, Err: errors.New("releases are frozen")})
	var he *hooks.Error
	fmt.Println(errors.As(err, &he), he.Hook)
	fmt.Println(err)
	// Output:
	// true freeze
	// hook freeze (pre-release): releases are frozen
}
