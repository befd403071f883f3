package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// An approval binds the plan that was shown, for the resource it was shown
// for (docs/plan-approve.md): two Apps with the same spec in two
// namespaces (staging and production) make two plans with two digests, and
// approving staging's plan on production approves nothing there
// (ApprovalStale, still at revision 1), while it upgrades staging.
func TestApprovalForStagingDoesNotApproveProduction(t *testing.T) {
	parallel(t, quick)
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-approval.yaml")
	env := testenv.Cluster(t)
	installCRDs(t, env, testWatches())
	staging, production := env.Namespace(t), env.Namespace(t)
	startConfined(t, env, staging+","+production, watchesFile, "--metrics-bind-address", "0")
	t.Cleanup(func() {
		deleteAll(t, env, staging, []schema.GroupVersionKind{appGVK})
		deleteAll(t, env, production, []schema.GroupVersionKind{appGVK})
	})
	ctx := context.Background()
	spec := map[string]any{"image": "registry.example/app:1.0"}
	for _, ns := range []string{staging, production} {
		if err := env.Client.Create(ctx, newApp(ns, "db", spec)); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range []string{staging, production} {
		waitReady(t, env, ns, "db", 1)
		patchSpec(t, env, ns, "db", map[string]any{"image": "registry.example/app:1.1"})
	}
	stagingPlan := waitPlan(t, env, staging, "db", "")
	productionPlan := waitPlan(t, env, production, "db", "")
	if stagingPlan.Digest == productionPlan.Digest {
		t.Errorf("staging and production have the same plan digest %s: an approval of one approves the other", stagingPlan.Digest)
	}

	annotate(t, env, appGVK, production, "db", map[string]any{api.AnnotationApprove: stagingPlan.Digest})
	st := waitHeldOrUpgraded(t, env, production, "db")
	if ready := condition(st, api.ConditionReady); ready.Reason != string(api.ReasonApprovalStale) || !strings.Contains(ready.Message, productionPlan.Digest) {
		t.Errorf("production approved with staging's plan: Ready %+v, want %s naming production's plan %s", ready, api.ReasonApprovalStale, productionPlan.Digest)
	}
	if st.Release == nil || st.Release.Revision != 1 {
		t.Errorf("staging's approval upgraded production: release %+v", st.Release)
	}

	annotate(t, env, appGVK, staging, "db", map[string]any{api.AnnotationApprove: stagingPlan.Digest})
	waitReady(t, env, staging, "db", 2)
}

// An approval never replays on a resource recreated under the same name:
// the App is upgraded by an approved plan, deleted, and created again with
// the same spec and the same approval annotation (as a manifest kept in git
// would hold it). Its release is installed (installs are not held); the
// same spec change then waits for an approval of its own plan.
func TestApprovalDoesNotReplayAfterRecreation(t *testing.T) {
	parallel(t, quick)
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-approval.yaml")
	env, ns, _ := appFixture(t, watchesFile)
	ctx := context.Background()
	v1, v2 := map[string]any{"image": "registry.example/app:1.0"}, map[string]any{"image": "registry.example/app:1.1"}
	if err := env.Client.Create(ctx, newApp(ns, "web", v1)); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "web", 1)
	patchSpec(t, env, ns, "web", v2)
	approved := waitPlan(t, env, ns, "web", "")
	annotate(t, env, appGVK, ns, "web", map[string]any{api.AnnotationApprove: approved.Digest})
	waitReady(t, env, ns, "web", 2)

	if err := env.Client.Delete(ctx, newApp(ns, "web", nil)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env, appGVK, ns, "web", 2*time.Minute)
	again := newApp(ns, "web", v1)
	again.SetAnnotations(map[string]string{api.AnnotationApprove: approved.Digest})
	if err := env.Client.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "web", 1)
	patchSpec(t, env, ns, "web", v2)
	st := waitHeldOrUpgraded(t, env, ns, "web")
	if st.Release == nil || st.Release.Revision != 1 {
		t.Fatalf("the approval of the deleted resource's plan %s upgraded the new one: release %+v", approved.Digest, st.Release)
	}
	if st.Plan == nil || st.Plan.Digest == approved.Digest {
		t.Errorf("the recreated resource's plan %+v is the deleted one's %s", st.Plan, approved.Digest)
	}
	if ready := condition(st, api.ConditionReady); ready.Reason != string(api.ReasonApprovalStale) {
		t.Errorf("Ready %+v, want %s (the annotation approves another resource's plan)", ready, api.ReasonApprovalStale)
	}
}

// A resource's chartkeeper.dev/approval may make approval manual, not
// lift the watch's manual approval, unless the watch allows it
// (upgrade.allowResourceAutoApproval): on watches-approval.yaml, an App
// annotated approval: auto is refused (Stalled AnnotationRefused, nothing
// released); on watches-approval-lax.yaml, which allows it, the same App
// is installed and upgraded without a plan.
func TestResourceCannotLiftManualApproval(t *testing.T) {
	parallel(t, quick)
	strict := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-approval.yaml")
	lax := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-approval-lax.yaml")
	env, ns, _ := appFixture(t, strict)
	create := func(ns string) {
		app := newApp(ns, "loose", map[string]any{"image": "registry.example/app:1.0"})
		app.SetAnnotations(map[string]string{api.AnnotationApproval: "auto"})
		if err := env.Client.Create(context.Background(), app); err != nil {
			t.Fatal(err)
		}
	}
	create(ns)

	var st api.Status
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		u, s, err := getApp(ctx, env, ns, "loose")
		if err != nil {
			return err
		}
		st = s
		if s.ObservedGeneration != u.GetGeneration() || condition(s, api.ConditionReady).Status == "" {
			return fmt.Errorf("not reconciled yet: %+v", s.Conditions)
		}
		if s.Release != nil || condition(s, api.ConditionStalled).Status == metav1.ConditionTrue {
			return nil
		}
		return fmt.Errorf("neither released nor stalled: %+v", s.Conditions)
	})
	if c := condition(st, api.ConditionStalled); c.Status != metav1.ConditionTrue || c.Reason != string(api.ReasonAnnotationRefused) ||
		!strings.Contains(c.Message, api.AnnotationApproval) || !strings.Contains(c.Message, "allowResourceAutoApproval") {
		t.Errorf("Stalled %+v, want True %s naming %s and the watch's allowResourceAutoApproval", c, api.ReasonAnnotationRefused, api.AnnotationApproval)
	}
	if st.Release != nil {
		t.Errorf("a resource lifted its watch's manual approval: released %+v", st.Release)
	}

	_, laxNS, _ := appFixture(t, lax)
	create(laxNS)
	waitReady(t, env, laxNS, "loose", 1)
	patchSpec(t, env, laxNS, "loose", map[string]any{"image": "registry.example/app:1.1"})
	waitReady(t, env, laxNS, "loose", 2)
}

// waitHeldOrUpgraded waits until the spec change of an App annotated with
// an approval is either refused (Ready False ApprovalStale) or upgraded (a
// revision above 1), and returns its status.
func waitHeldOrUpgraded(t *testing.T, env *testenv.Env, ns, name string) api.Status {
	t.Helper()
	var st api.Status
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		u, s, err := getApp(ctx, env, ns, name)
		if err != nil {
			return err
		}
		st = s
		if s.ObservedGeneration != u.GetGeneration() {
			return fmt.Errorf("generation %d not observed yet", u.GetGeneration())
		}
		if s.Release != nil && s.Release.Revision > 1 {
			return nil
		}
		if condition(s, api.ConditionReady).Reason == string(api.ReasonApprovalStale) {
			return nil
		}
		return fmt.Errorf("neither held nor upgraded: release %+v, conditions %+v", s.Release, s.Conditions)
	})
	return st
}
