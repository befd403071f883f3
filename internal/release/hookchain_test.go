package release

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

func slowPost(ctx context.Context, _ hooks.Request, _ hooks.Release) (hooks.Result, error) {
	<-ctx.Done()
	return hooks.Result{}, ctx.Err()
}

func requeuer(d time.Duration) hooks.PostReleaseFunc {
	return func(context.Context, hooks.Request, hooks.Release) (hooks.Result, error) {
		return hooks.Result{RequeueAfter: d}, nil
	}
}

var chainKind = schema.GroupKind{Group: "g", Kind: "K"}

// chainOf registers hs for one kind and returns the kind's chain, as the
// engine gets it.
func chainOf(t *testing.T, hs ...hooks.Hook) hookChain {
	t.Helper()
	r := hooks.NewRegistry()
	if err := r.Add(chainKind, hs...); err != nil {
		t.Fatal(err)
	}
	return hookChain(r.For(chainKind))
}

func TestHookChainTranslatesInOrder(t *testing.T) {
	add := func(name string) hooks.TranslatorFunc {
		return func(_ context.Context, _ hooks.Request, v chartutil.Values) (chartutil.Values, error) {
			v["order"] = append(v["order"].([]string), name)
			return v, nil
		}
	}
	c := chainOf(t, hooks.Hook{Name: "first", Impl: add("first")}, hooks.Hook{Name: "second", Impl: add("second")})
	out, err := c.Translate(context.Background(), hooks.Request{Log: logr.Discard()}, chartutil.Values{"order": []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(out["order"].([]string), ","); got != "first,second" {
		t.Errorf("order %s", got)
	}
}

func TestHookChainErrorsNameTheHookAndTimeOut(t *testing.T) {
	c := chainOf(t, hooks.Hook{Name: "soon", Impl: requeuer(time.Minute)}, hooks.Hook{Name: "sooner", Impl: requeuer(time.Second)},
		hooks.Hook{Name: "stuck", Impl: hooks.PostReleaseFunc(slowPost), Timeout: 50 * time.Millisecond})
	res, err := c.PostRelease(context.Background(), hooks.Request{Log: logr.Discard()}, hooks.Release{})
	var he *hooks.Error
	if !errors.As(err, &he) || he.Hook != "stuck" || he.Phase != hooks.PhasePostRelease || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("error %v", err)
	}
	if res.RequeueAfter != time.Second {
		t.Errorf("merged requeue %s, want the soonest (1s)", res.RequeueAfter)
	}
	failing := hooks.TranslatorFunc(func(context.Context, hooks.Request, chartutil.Values) (chartutil.Values, error) {
		return nil, errors.New("boom")
	})
	c = chainOf(t, hooks.Hook{Name: "failing", Impl: failing})
	if _, err := c.Translate(context.Background(), hooks.Request{Log: logr.Discard()}, chartutil.Values{}); err == nil || !strings.Contains(err.Error(), "hook failing (translate): boom") {
		t.Errorf("translate error %v", err)
	}
}
