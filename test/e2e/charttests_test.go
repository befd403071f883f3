package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var (
	testedAppGVK   = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "TestedApp"}
	reportedAppGVK = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "ReportedApp"}
)

// failingTest is the spec that makes the chart's test fail on the local
// cluster: its test Pod carries the label kwok's chaos stage fails
// (test/devcluster/kwok-stages.yaml), as a test of a broken app would.
var failingTest = map[string]any{"test": map[string]any{"podLabels": map[string]any{
	"pod-container-running-failed.stage.kwok.x-k8s.io": "true"}}}

// The walkthrough of docs/chart-tests.md: the chart's helm test gates
// each install and upgrade once the release is ready.
//
//   - An install whose test passes: Tested True naming the test, Ready
//     True, the revision recorded in status.test, helm status shows the
//     test suite, and no test Pod is left.
//   - An upgrade whose test fails: Tested False naming the failed test Pod
//     and why it failed, rolled back (Remediated); retried once, then
//     Stalled with the last good revision running; no test Pod left. Fixing
//     the spec releases a revision that passes, and clears the count.
//   - A first install whose test fails (onFailure: remediate) is not
//     uninstalled (readiness.remediateInstall: false): Stalled, TestFailed.
//   - onFailure: report: Tested False, nothing rolled back, Ready True.
func TestChartTestsGateReleases(t *testing.T) {
	parallel(t, 50*time.Second)
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-tests.yaml")
	env, ns, _ := kindFixture(t, watchesFile, testedAppGVK, reportedAppGVK)
	ctx := context.Background()

	// An install whose test passes.
	if err := env.Client.Create(ctx, newCR(testedAppGVK, ns, "web", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	st := waitTested(t, env, testedAppGVK, ns, "web", metav1.ConditionTrue, api.ReasonTestSucceeded, "web-test-connection")
	if st.Test == nil || st.Test.Revision != 1 || st.Test.Result != api.TestSucceeded {
		t.Errorf("status.test %+v, want revision 1 Succeeded", st.Test)
	}
	waitCRReady(t, env, testedAppGVK, ns, "web")
	if _, s, err := getCR(ctx, env, testedAppGVK, ns, "web"); err != nil || !strings.HasSuffix(condition(s, api.ConditionReady).Message, "its chart tests passed") {
		t.Errorf("Ready does not say the tests passed: %+v (%v)", s.Conditions, err)
	}
	if out := helmCmd(t, env, "status", "web", "-n", ns); !strings.Contains(out, "TEST SUITE:     web-test-connection") || !strings.Contains(out, "Phase:          Succeeded") {
		t.Errorf("helm status does not show the test suite:\n%s", out)
	}
	waitNoTestPod(t, env, ns, "web-test-connection")

	// An upgrade whose test fails: rolled back, retried once, then stalled.
	patchCR(t, env, testedAppGVK, ns, "web", failingTest)
	st = waitTested(t, env, testedAppGVK, ns, "web", metav1.ConditionFalse, api.ReasonTestFailed, "web-test-connection")
	if c := condition(st, api.ConditionTested); !strings.Contains(c.Message, "containerFailed") {
		t.Errorf("Tested does not say why the Pod failed: %q", c.Message)
	}
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		_, s, err := getCR(ctx, env, testedAppGVK, ns, "web")
		if err != nil {
			return err
		}
		st = s
		if c := condition(s, api.ConditionStalled); c.Status != metav1.ConditionTrue || c.Reason != string(api.ReasonRetriesExhausted) {
			return fmt.Errorf("not stalled yet: %+v", s.Conditions)
		}
		return nil
	})
	if c := condition(st, api.ConditionRemediated); c.Status != metav1.ConditionTrue || c.Reason != string(api.ReasonRollbackSucceeded) || !strings.Contains(c.Message, "web-test-connection") {
		t.Errorf("Remediated %+v", c)
	}
	if c := condition(st, api.ConditionTested); c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonTestFailed) {
		t.Errorf("Tested %+v", c)
	}
	if st.Failures != 2 {
		t.Errorf("failures %d, want 2 (the first attempt and 1 retry)", st.Failures)
	}
	history := helmCmd(t, env, "history", "web", "-n", ns, "--max", "100")
	lines := strings.Split(strings.TrimSpace(history), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "deployed") || !strings.Contains(last, "Rollback to ") {
		t.Errorf("the latest revision is not a rollback, deployed:\n%s", history)
	}
	if out := helmCmd(t, env, "status", "web", "-n", ns, "--revision", "4"); !strings.Contains(out, "Phase:          Failed") {
		t.Errorf("helm status of revision 4 does not show the failed test:\n%s", out)
	}
	if evs := strings.Join(eventMessages(ctx, t, env, ns, "web"), "\n"); !strings.Contains(evs, "revision 2: test Pod "+ns+"/web-test-connection failed") {
		t.Errorf("no Event says the test failed:\n%s", evs)
	}
	time.Sleep(3 * time.Second)
	if again := helmCmd(t, env, "history", "web", "-n", ns, "--max", "100"); again != history {
		t.Errorf("history keeps growing after Stalled:\n%s\nthen\n%s", history, again)
	}
	waitNoTestPod(t, env, ns, "web-test-connection")

	// Fixing the spec releases a revision whose test passes; the count goes.
	patchCR(t, env, testedAppGVK, ns, "web", map[string]any{"test": map[string]any{"podLabels": nil}})
	waitTested(t, env, testedAppGVK, ns, "web", metav1.ConditionTrue, api.ReasonTestSucceeded, "web-test-connection")
	waitCRReady(t, env, testedAppGVK, ns, "web")
	if _, s, err := getCR(ctx, env, testedAppGVK, ns, "web"); err != nil || s.Failures != 0 || s.Test == nil || s.Release == nil || s.Test.Revision != s.Release.Revision {
		t.Errorf("after the fix: failures %d, status.test %+v, release %+v (%v)", s.Failures, s.Test, s.Release, err)
	}

	// A first install whose test fails is kept, not uninstalled.
	if err := env.Client.Create(ctx, newCR(testedAppGVK, ns, "fresh", failingTest)); err != nil {
		t.Fatal(err)
	}
	waitTested(t, env, testedAppGVK, ns, "fresh", metav1.ConditionFalse, api.ReasonTestFailed, "fresh-test-connection")
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, s, err := getCR(ctx, env, testedAppGVK, ns, "fresh")
		if err != nil {
			return err
		}
		if c := condition(s, api.ConditionStalled); c.Status != metav1.ConditionTrue || c.Reason != string(api.ReasonTestFailed) || s.Release == nil || s.Release.Revision != 1 {
			return fmt.Errorf("want revision 1 Stalled TestFailed: %+v %+v", s.Release, s.Conditions)
		}
		return nil
	})
	if out := helmCmd(t, env, "history", "fresh", "-n", ns); strings.Count(strings.TrimSpace(out), "\n") != 1 || !strings.Contains(out, "deployed") {
		t.Errorf("the first install is not kept as revision 1:\n%s", out)
	}

	// onFailure: report: only the condition.
	if err := env.Client.Create(ctx, newCR(reportedAppGVK, ns, "shop", failingTest)); err != nil {
		t.Fatal(err)
	}
	waitTested(t, env, reportedAppGVK, ns, "shop", metav1.ConditionFalse, api.ReasonTestFailed, "shop-test-connection")
	waitCRReady(t, env, reportedAppGVK, ns, "shop")
	_, st, err := getCR(ctx, env, reportedAppGVK, ns, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if st.Release == nil || st.Release.Revision != 1 || condition(st, api.ConditionRemediated).Status != "" {
		t.Errorf("report only: release %+v, conditions %+v", st.Release, st.Conditions)
	}
	waitNoTestPod(t, env, ns, "shop-test-connection")
}

// waitTested waits until a resource's Tested condition has status and
// reason for its current generation, its message naming what (a test
// Pod), and returns its status.
func waitTested(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string, status metav1.ConditionStatus, reason api.Reason, what string) api.Status {
	t.Helper()
	return waitCondition(t, env, gvk, ns, name, api.ConditionTested, status, reason, what)
}

// waitNoTestPod waits until the test Pod is gone: the operator deletes
// the test Pods after each run.
func waitNoTestPod(t *testing.T, env *testenv.Env, ns, name string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Pod{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("test Pod %s/%s is still there (%v)", ns, name, err)
	})
}
