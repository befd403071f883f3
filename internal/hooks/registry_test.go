package hooks

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

type fnTranslator func(chartutil.Values) (chartutil.Values, error)

func (f fnTranslator) Translate(_ context.Context, _ Request, v chartutil.Values) (chartutil.Values, error) {
	return f(v)
}

type slowPost struct{}

func (slowPost) PostRelease(ctx context.Context, _ Request, _ Release) (Result, error) {
	<-ctx.Done()
	return Result{}, ctx.Err()
}

type requeuer time.Duration

func (r requeuer) PostRelease(context.Context, Request, Release) (Result, error) {
	return Result{RequeueAfter: time.Duration(r)}, nil
}

var gk = schema.GroupKind{Group: "g", Kind: "K"}

func TestRegistryValidatesAndOrders(t *testing.T) {
	r := NewRegistry()
	if err := r.Add(gk, Hook{Impl: requeuer(1)}); err == nil {
		t.Error("a hook without a name was accepted")
	}
	if err := r.Add(gk, Hook{Name: "nothing", Impl: 42}); err == nil {
		t.Error("a hook implementing nothing was accepted")
	}
	add := func(name string) fnTranslator {
		return func(v chartutil.Values) (chartutil.Values, error) {
			v["order"] = append(v["order"].([]string), name)
			return v, nil
		}
	}
	if err := r.Add(gk, Hook{Name: "first", Impl: add("first")}, Hook{Name: "second", Impl: add("second")}); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(gk, Hook{Name: "first", Impl: add("again")}); err == nil {
		t.Error("a duplicate name was accepted")
	}
	out, err := r.For(gk).Translate(context.Background(), Request{Log: logr.Discard()}, chartutil.Values{"order": []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(out["order"].([]string), ","); got != "first,second" {
		t.Errorf("order %s", got)
	}
	if r.For(schema.GroupKind{Kind: "Other"}) != nil || (*Registry)(nil).For(gk) != nil {
		t.Error("a kind without hooks has hooks")
	}
}

func TestChainErrorsNameTheHookAndTimeOut(t *testing.T) {
	r := NewRegistry()
	if err := r.Add(gk, Hook{Name: "soon", Impl: requeuer(time.Minute)}, Hook{Name: "sooner", Impl: requeuer(time.Second)},
		Hook{Name: "stuck", Impl: slowPost{}, Timeout: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	res, err := r.For(gk).PostRelease(context.Background(), Request{Log: logr.Discard()}, Release{})
	var he *Error
	if !errors.As(err, &he) || he.Hook != "stuck" || he.Phase != PhasePostRelease || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("error %v", err)
	}
	if res.RequeueAfter != time.Second {
		t.Errorf("merged requeue %s, want the soonest (1s)", res.RequeueAfter)
	}
	if err := r.Add(gk, Hook{Name: "failing", Impl: fnTranslator(func(chartutil.Values) (chartutil.Values, error) { return nil, errors.New("boom") })}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.For(gk).Translate(context.Background(), Request{Log: logr.Discard()}, chartutil.Values{}); err == nil || !strings.Contains(err.Error(), "hook failing (translate): boom") {
		t.Errorf("translate error %v", err)
	}
}
