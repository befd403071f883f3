package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// The walkthrough of docs/plan-approve.md: with upgrade.approval: manual,
// a spec change writes the upgrade's plan and changes nothing; chartkeeper
// diff, with no operator involved, prints the same plan for the same
// resource; approving the plan's digest makes exactly that upgrade; an
// approval of a plan made stale by a later change is refused. No Secret
// value is in the plan, nor in the diff.
func TestUpgradesWaitForApprovalOfTheirPlan(t *testing.T) {
	parallel(t, quick)
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-approval.yaml")
	env, ns, _ := appFixture(t, watchesFile)
	ctx := context.Background()
	const oldPass, newPass = "first-password-0001", "second-password-0002"
	if err := env.Client.Create(ctx, newApp(ns, "web", map[string]any{"password": oldPass})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "web", 1) // installs are not held

	// A spec change: a plan, and no new revision.
	patchSpec(t, env, ns, "web", map[string]any{"image": "registry.example/app:1.1", "password": newPass})
	first := waitPlan(t, env, ns, "web", "")
	dep := plannedUpdate(first, "Deployment", "web")
	if dep == nil || !slices.Contains(dep.Fields, "/spec/template/spec/containers/0/image") {
		t.Fatalf("the plan does not update the Deployment's image: %+v", first)
	}
	if sec := plannedUpdate(first, "Secret", "web-password"); sec == nil || !slices.Contains(sec.Fields, "/data/password") {
		t.Errorf("the plan does not update the password Secret's data: %+v", first)
	}
	u, st, err := getApp(ctx, env, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if ready := condition(st, api.ConditionReady); ready.Status != metav1.ConditionFalse || ready.Reason != string(api.ReasonAwaitingApproval) || !strings.Contains(ready.Message, first.Digest) {
		t.Errorf("Ready %+v, want False %s naming plan %s", ready, api.ReasonAwaitingApproval, first.Digest)
	}
	if c := condition(st, api.ConditionStalled); c.Status == metav1.ConditionTrue {
		t.Errorf("a resource awaiting approval is Stalled: %+v", c)
	}
	raw, _ := json.Marshal(u.Object["status"])
	for _, secret := range []string{newPass, base64.StdEncoding.EncodeToString([]byte(newPass)), oldPass} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the status holds a Secret value %q: %s", secret, raw)
		}
	}
	if hist := helmCmd(t, env, "history", "web", "-n", ns, "-o", "json"); strings.Count(hist, `"revision"`) != 1 {
		t.Errorf("an unapproved plan made a revision: %s", hist)
	}

	// chartkeeper diff: the same plan for the same resource, offline.
	out := runDiff(t, env, watchesFile, ns, "web")
	for _, want := range []string{`plan ` + first.Digest + `:`, `--- Deployment ` + ns + `/web \(live\)`, `(?m)^-\s+- image: registry.example/app:1.0$`,
		`(?m)^\+\s+- image: registry.example/app:1.1$`, `--- Secret ` + ns + `/web-password`, `(?m)^-\s+password: redacted \(old value\)$`,
		`(?m)^\+\s+password: redacted \(new value\)$`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("chartkeeper diff does not say %s:\n%s", want, out)
		}
	}
	for _, secret := range []string{newPass, base64.StdEncoding.EncodeToString([]byte(newPass)), oldPass, base64.StdEncoding.EncodeToString([]byte(oldPass))} {
		if strings.Contains(out, secret) {
			t.Errorf("chartkeeper diff prints a Secret value %q:\n%s", secret, out)
		}
	}

	// Approving the plan's digest makes exactly that upgrade.
	annotate(t, env, appGVK, ns, "web", map[string]any{api.AnnotationApprove: first.Digest})
	waitReady(t, env, ns, "web", 2)
	_, st, err = getApp(ctx, env, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if st.Plan != nil || condition(st, api.ConditionPlanReady).Type != "" || st.AppliedPlan != first.Digest {
		t.Errorf("after the approved upgrade: plan %+v, PlanReady %+v, appliedPlan %q", st.Plan, condition(st, api.ConditionPlanReady), st.AppliedPlan)
	}

	// A plan made stale by a later change is refused.
	patchSpec(t, env, ns, "web", map[string]any{"image": "registry.example/app:1.2"})
	second := waitPlan(t, env, ns, "web", first.Digest)
	patchSpec(t, env, ns, "web", map[string]any{"image": "registry.example/app:1.3"})
	third := waitPlan(t, env, ns, "web", second.Digest)
	annotate(t, env, appGVK, ns, "web", map[string]any{api.AnnotationApprove: second.Digest})
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getApp(ctx, env, ns, "web")
		if err != nil {
			return err
		}
		if ready := condition(st, api.ConditionReady); ready.Reason != string(api.ReasonApprovalStale) || !strings.Contains(ready.Message, third.Digest) {
			return fmt.Errorf("Ready %+v, want %s naming the current plan %s", ready, api.ReasonApprovalStale, third.Digest)
		}
		return nil
	})
	if _, st, err = getApp(ctx, env, ns, "web"); err != nil || st.Release == nil || st.Release.Revision != 2 {
		t.Errorf("a stale approval upgraded: %+v (%v)", st.Release, err)
	}
}

// waitPlan waits until the App's status.plan is a plan other than not, and
// returns it.
func waitPlan(t *testing.T, env *testenv.Env, ns, name, not string) *api.PlanStatus {
	t.Helper()
	return waitPlanCR(t, env, appGVK, ns, name, not)
}

// waitPlanCR is waitPlan for a custom resource of any kind.
func waitPlanCR(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name, not string) *api.PlanStatus {
	t.Helper()
	var p *api.PlanStatus
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, env, gvk, ns, name)
		if err != nil {
			return err
		}
		if st.Plan == nil || st.Plan.Digest == not {
			return fmt.Errorf("no new plan: %+v %+v", st.Plan, st.Conditions)
		}
		if c := condition(st, api.ConditionPlanReady); c.Status != metav1.ConditionTrue {
			return fmt.Errorf("PlanReady %+v", c)
		}
		p = st.Plan
		return nil
	})
	return p
}

func plannedUpdate(p *api.PlanStatus, kind, name string) *api.PlannedObject {
	for i, o := range p.Update {
		if o.Kind == kind && o.Name == name {
			return &p.Update[i]
		}
	}
	return nil
}

// runDiff runs chartkeeper diff on an App (as a user's file would
// hold it: spec and identity, no status) and returns its output.
func runDiff(t *testing.T, env *testenv.Env, watchesFile, ns, name string) string {
	t.Helper()
	return runDiffCR(t, env, appGVK, watchesFile, ns, name)
}

// runDiffCR runs chartkeeper diff on a custom resource of any kind, as a
// user's file would hold it (spec and identity, no status), expecting
// changes (exit code 3), and returns its output.
func runDiffCR(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, watchesFile, ns, name string) string {
	t.Helper()
	cr, _, err := getCR(context.Background(), env, gvk, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	file := map[string]any{"apiVersion": cr.GetAPIVersion(), "kind": cr.GetKind(),
		"metadata": map[string]any{"name": cr.GetName(), "namespace": cr.GetNamespace()}, "spec": cr.Object["spec"]}
	b, err := yaml.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cr.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(operatorBinary(t), "diff", "-f", path, "--watches-file", watchesFile, "--kubeconfig", env.Kubeconfig, "--exit-code")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("chartkeeper diff: %v (want exit code 3: changes)\n%s", err, out)
	}
	return string(out)
}
