package release

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	hophook "github.com/operator-framework/helm-operator-plugins/pkg/hook"
	hopvalues "github.com/operator-framework/helm-operator-plugins/pkg/values"
	"helm.sh/helm/v3/pkg/chartutil"
	helmrelease "helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/hooks"
	"github.com/chartkeeper/chartkeeper/internal/hooks/hopadapter"
)

var appGK = schema.GroupKind{Group: "test.chartkeeper.dev", Kind: "App"}

// fakeHook records its calls and fails while fail is set (only in the
// phase failIn, if that is set).
type fakeHook struct {
	calls   []string
	fail    error
	failIn  string
	requeue time.Duration
}

func (f *fakeHook) err(phase string) error {
	if f.failIn != "" && f.failIn != phase {
		return nil
	}
	return f.fail
}

func (f *fakeHook) Translate(_ context.Context, req hooks.Request, v chartutil.Values) (chartutil.Values, error) {
	f.calls = append(f.calls, "translate")
	if err := f.err("translate"); err != nil {
		return nil, err
	}
	v["fromHook"] = "yes"
	req.AppStatus["seen"] = true
	return v, nil
}

func (f *fakeHook) PreRelease(context.Context, hooks.Request, chartutil.Values) (hooks.Result, error) {
	f.calls = append(f.calls, "pre")
	return hooks.Result{}, f.err("pre")
}

func (f *fakeHook) PostRelease(_ context.Context, _ hooks.Request, rel hooks.Release) (hooks.Result, error) {
	f.calls = append(f.calls, "post")
	return hooks.Result{RequeueAfter: f.requeue}, f.err("post")
}

func (f *fakeHook) BeforeUninstall(context.Context, hooks.Request) (hooks.Result, error) {
	f.calls = append(f.calls, "uninstall")
	return hooks.Result{}, f.err("uninstall")
}

func hookMachine(t *testing.T, hs ...hooks.Hook) *machine {
	reg := hooks.NewRegistry()
	if err := reg.Add(appGK, hs...); err != nil {
		t.Fatal(err)
	}
	return newMachine(t, nil, WithHooks(reg))
}

func TestHooksRunInTheirPhases(t *testing.T) {
	f := &fakeHook{requeue: time.Minute}
	m := hookMachine(t, hooks.Hook{Name: "fake", Impl: f})
	expectTrace(t, m.run(5), "Absent/Install", "InSync")
	if got := strings.Join(f.calls, ","); got != "translate,pre,translate,post" {
		t.Errorf("calls %s", got)
	}
	if m.st.App["seen"] != true {
		t.Errorf("status.app not kept: %v", m.st.App)
	}
	rel, err := m.store.Last("app")
	if err != nil || rel.Config["fromHook"] != "yes" {
		t.Errorf("translated value not released: %v %v", rel.Config, err)
	}
	res, err := m.engine.Step(context.Background(), m.target, m.obj, &m.st)
	if err != nil || res.Requeue != time.Minute {
		t.Errorf("a post hook's requeue is honoured: %+v %v", res, err)
	}
}

func TestHookFailureSurfacesAndLeavesTheReleaseAlone(t *testing.T) {
	f := &fakeHook{}
	m := hookMachine(t, hooks.Hook{Name: "flaky", Impl: f})
	m.run(5)
	before := m.history()
	f.fail = errors.New("backup target unreachable")
	for _, phase := range []string{"post", "translate"} {
		f.failIn = phase
		res, err := m.engine.Step(context.Background(), m.target, m.obj, &m.st)
		if err != nil || res.Requeue != 10*time.Second || m.st.NextAttemptTime == nil || !m.st.NextAttemptTime.Time.Equal(t0.Add(10*time.Second)) {
			t.Fatalf("%s: step %+v %v (next attempt %v), want a requeue after the backoff", phase, res, err, m.st.NextAttemptTime)
		}
		c := m.cond(api.ConditionReady)
		if c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonHookFailed) || !strings.Contains(c.Message, "hook flaky") || !strings.Contains(c.Message, "backup target unreachable") {
			t.Errorf("%s: Ready %+v", phase, c)
		}
	}
	if got := m.history(); strings.Join(got, " ") != strings.Join(before, " ") {
		t.Errorf("a failing hook changed the release: %v -> %v", before, got)
	}
	// The failing PostRelease hook is not called again before its backoff.
	f.failIn, f.calls = "post", nil
	m.clock.Step(m.st.NextAttemptTime.Sub(m.clock.Now()))
	for i := 0; i < 3; i++ {
		if _, err := m.engine.Step(context.Background(), m.target, m.obj, &m.st); err != nil {
			t.Fatal(err)
		}
		if c := m.cond(api.ConditionReady); c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonHookFailed) {
			t.Errorf("step %d while backing off: Ready %+v", i, c)
		}
	}
	if got := strings.Count(strings.Join(f.calls, ","), "post"); got != 1 {
		t.Errorf("PostRelease called %d times within its backoff (calls %v)", got, f.calls)
	}
	m.clock.Step(m.st.NextAttemptTime.Sub(m.clock.Now()))
	f.fail = nil
	expectTrace(t, m.run(3), "InSync")
	if c := m.cond(api.ConditionReady); c.Status != metav1.ConditionTrue || m.st.NextAttemptTime != nil || m.st.BackoffOf != "" {
		t.Errorf("not Ready again after the hook recovered: %+v, backoff %q until %v", c, m.st.BackoffOf, m.st.NextAttemptTime)
	}
}

type uninstallOnly struct{ err *error }

func (u uninstallOnly) BeforeUninstall(context.Context, hooks.Request) (hooks.Result, error) {
	return hooks.Result{}, *u.err
}

func TestFailingPreHookBlocksTheUpgrade(t *testing.T) {
	calls := 0
	m := hookMachine(t, hooks.Hook{Name: "gate", Impl: hooks.PreReleaseFunc(func(context.Context, hooks.Request, chartutil.Values) (hooks.Result, error) {
		calls++
		return hooks.Result{}, errors.New("cluster unhealthy")
	})})
	// Tried, then held back by its backoff (10s, 20s), then tried again.
	for i, want := range []int{1, 1, 2, 2, 3} {
		res, err := m.engine.Step(context.Background(), m.target, m.obj, &m.st)
		if err != nil || res.Ran != ActionNone || calls != want {
			t.Fatalf("step %d: %+v %v, %d hook calls, want %d", i, res, err, calls, want)
		}
		if c := m.cond(api.ConditionReady); c.Reason != string(api.ReasonHookFailed) || !strings.Contains(c.Message, "cluster unhealthy") {
			t.Errorf("step %d: Ready %+v", i, c)
		}
		if i%2 == 0 {
			m.clock.Step(time.Second)
		} else {
			m.clock.Step(m.st.NextAttemptTime.Sub(m.clock.Now()))
		}
	}
	if len(m.history()) != 0 {
		t.Errorf("history %v", m.history())
	}
}

func TestFailingBeforeUninstallHookDelaysTheUninstall(t *testing.T) {
	var hookErr error
	m := hookMachine(t, hooks.Hook{Name: "final-backup", Impl: uninstallOnly{&hookErr}})
	m.run(5)
	now := metav1.NewTime(t0)
	m.obj.SetDeletionTimestamp(&now)
	hookErr = errors.New("snapshot failed")
	for i := 0; i < 2; i++ { // failed, then held back by its backoff
		res, err := m.engine.Step(context.Background(), m.target, m.obj, &m.st)
		if err != nil || res.Ran != ActionNone || res.Requeue <= 0 || res.Finished {
			t.Fatalf("step %d: uninstalled despite the failing hook: %+v %v", i, res, err)
		}
	}
	if len(m.history()) == 0 {
		t.Fatal("release gone despite the failing hook")
	}
	if c := m.cond(api.ConditionReady); c.Reason != string(api.ReasonHookFailed) || !strings.Contains(c.Message, "final-backup") ||
		!strings.Contains(c.Message, api.AnnotationSkipUninstallHooks) {
		t.Errorf("Ready %+v", c)
	}
	hookErr = nil
	m.clock.Step(m.st.NextAttemptTime.Sub(m.clock.Now()))
	res, err := m.engine.Step(context.Background(), m.target, m.obj, &m.st)
	if err != nil || res.Ran != ActionUninstall {
		t.Fatalf("after the hook succeeded: %+v %v", res, err)
	}
}

// The annotation chartkeeper.dev/skip-uninstall-hooks: "true" lets a
// deletion held by a failing BeforeUninstall hook proceed at once, the
// hooks skipped (an Event says so).
func TestSkipUninstallHooksAnnotation(t *testing.T) {
	hookErr := errors.New("snapshot failed")
	m := hookMachine(t, hooks.Hook{Name: "final-backup", Impl: uninstallOnly{&hookErr}})
	m.run(5)
	now := metav1.NewTime(t0)
	m.obj.SetDeletionTimestamp(&now)
	if res, err := m.engine.Step(context.Background(), m.target, m.obj, &m.st); err != nil || res.Ran != ActionNone {
		t.Fatalf("uninstalled despite the failing hook: %+v %v", res, err)
	}
	m.events.take()
	m.obj.SetAnnotations(map[string]string{api.AnnotationSkipUninstallHooks: "true"})
	res, err := m.engine.Step(context.Background(), m.target, m.obj, &m.st)
	if err != nil || res.Ran != ActionUninstall || res.ActionErr != nil {
		t.Fatalf("skip annotation: %+v %v", res, err)
	}
	if evs := strings.Join(m.events.take(), ","); !strings.Contains(evs, "Warning "+string(api.ReasonHooksSkipped)) {
		t.Errorf("events %s", evs)
	}
	if len(m.history()) != 0 {
		t.Errorf("history %v", m.history())
	}
}

// Hooks written for helm-operator-plugins run unchanged through the adapters.
func TestHelmOperatorPluginsHooksThroughAdapters(t *testing.T) {
	var pre, post int
	var seenRelease string
	translator := hopvalues.TranslatorFunc(func(_ context.Context, u *unstructured.Unstructured) (chartutil.Values, error) {
		spec, _, _ := unstructured.NestedMap(u.Object, "spec")
		spec["translated"] = "by-hop"
		return spec, nil
	})
	preHook := hophook.PreHookFunc(func(_ *unstructured.Unstructured, vals chartutil.Values, _ logr.Logger) error {
		pre++
		if vals["translated"] != "by-hop" {
			t.Errorf("pre hook saw %v", vals)
		}
		return nil
	})
	postHook := hophook.PostHookFunc(func(_ *unstructured.Unstructured, rel helmrelease.Release, _ logr.Logger) error {
		post++
		seenRelease = rel.Name
		return nil
	})
	m := hookMachine(t,
		hooks.Hook{Name: "hop-translator", Impl: hopadapter.FromTranslator(translator)},
		hooks.Hook{Name: "hop-pre", Impl: hopadapter.FromPreHook(preHook)},
		hooks.Hook{Name: "hop-post", Impl: hopadapter.FromPostHook(postHook)},
	)
	expectTrace(t, m.run(5), "Absent/Install", "InSync")
	rel, _ := m.store.Last("app")
	if pre != 1 || post != 1 || seenRelease != "app" || rel.Config["translated"] != "by-hop" {
		t.Errorf("pre %d post %d release %q config %v", pre, post, seenRelease, rel.Config)
	}
}
