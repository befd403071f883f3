package release

import (
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// withTests turns the watch's chart tests on, with onFailure.
func withTests(onFailure watches.TestOnFailure) func(*watches.Policy) {
	return func(p *watches.Policy) {
		p.Test = watches.TestPolicy{Enable: true, Timeout: time.Minute, OnFailure: onFailure}
	}
}

// failingTest makes the test chart's test Pod fail (its creation is refused).
var failingTest = map[string]any{"data": "v2", "test": "fail-me"}

// errForbiddenTest is the API server's answer to a test Pod the operator's
// RBAC does not allow, as Helm's test action wraps it.
var errForbiddenTest = errors.New(`warning: Hook test app/templates/tests/test.yaml failed: 1 error occurred:
	* pods is forbidden: User "system:serviceaccount:ops:chartkeeper" cannot create resource "pods" in API group "" in the namespace "ns"`)

func TestChartTest(t *testing.T) {
	installed := func(m *machine) { m.step() } // Absent/Install: the next step tests it
	upgraded := func(m *machine) {
		m.run(5)
		m.setValues(failingTest)
		m.step() // OutOfSync/Upgrade
	}
	runActionCases(t, []actionCase{
		{name: "a passing test: Tested True, the revision recorded", policy: withTests(watches.TestRemediate), setup: installed,
			want: "Untested/Test", events: []string{"Normal TestSucceeded"},
			conds:      map[string]string{"Tested": "True TestSucceeded", "Released": "True InstallSucceeded", "Ready": "False Progressing"},
			lastAction: "Install"},
		{name: "a failed test counts toward remediation", policy: withTests(watches.TestRemediate), setup: upgraded,
			want: "Untested/Test!", events: []string{"Warning TestFailed"},
			conds:    map[string]string{"Tested": "False TestFailed", "Released": "True UpgradeSucceeded", "Ready": "False Progressing"},
			failures: 1, lastAction: "Upgrade"},
		{name: "a failed test only reported is not counted", policy: withTests(watches.TestReport), setup: upgraded,
			want: "Untested/Test!", events: []string{"Warning TestFailed"},
			conds:      map[string]string{"Tested": "False TestFailed", "Released": "True UpgradeSucceeded"},
			lastAction: "Upgrade"},
		{name: "a transient error retries the step", policy: withTests(watches.TestRemediate), setup: installed,
			fail: map[string]error{"Test": apierrors.NewServiceUnavailable("etcd leader changed")},
			want: "Untested/Test!", events: []string{"Warning TransientError"}, stepErr: true,
			conds: map[string]string{"Tested": ""}, lastAction: "Install"},
		{name: "RBAC refusing the test Pods is no verdict: held back", policy: withTests(watches.TestRemediate), setup: installed,
			fail: map[string]error{"Test": errForbiddenTest},
			want: "Untested/Test!", events: []string{"Warning Forbidden"},
			conds:      map[string]string{"Tested": "Unknown Forbidden", "Ready": "False Forbidden", "Stalled": ""},
			lastAction: "Install"},
		{name: "a release that could not be read is no verdict: backed off", policy: withTests(watches.TestRemediate), setup: installed,
			fail: map[string]error{"Test": errors.New(`release: not found`)},
			want: "Untested/Test!", events: []string{"Warning TestFailed"},
			conds:      map[string]string{"Tested": "Unknown TestFailed", "Released": "True InstallSucceeded", "Stalled": ""},
			lastAction: "Install"},
		{name: "tests off: no Tested condition", setup: installed, want: "InSync", conds: map[string]string{"Tested": "", "Ready": "True Succeeded"}},
	})
}

// The Tested condition and status.test name the tests, or the test that
// failed and why; the decision to remediate says it again.
func TestChartTestMessages(t *testing.T) {
	m := newMachine(t, withTests(watches.TestRemediate))
	expectTrace(t, m.run(5), "Absent/Install", "Untested/Test", "InSync")
	if c := m.cond(api.ConditionTested); c.Message != "revision 1: tests passed: app-test" {
		t.Errorf("Tested %q", c.Message)
	}
	if c := m.cond(api.ConditionReady); c.Message != "revision 1 released and ready; its chart tests passed" {
		t.Errorf("Ready %q", c.Message)
	}
	if ts := m.st.Test; ts == nil || ts.Revision != 1 || ts.Result != api.TestSucceeded || ts.Time == nil {
		t.Errorf("status.test %+v", ts)
	}
	m.setValues(failingTest)
	expectTrace(t, m.run(2), "OutOfSync/Upgrade", "Untested/Test!")
	c := m.cond(api.ConditionTested)
	if !strings.HasPrefix(c.Message, "revision 2: test Pod ns/app-test failed: ") || !strings.Contains(c.Message, `"fail-me" is not allowed`) {
		t.Errorf("Tested %q", c.Message)
	}
	if ts := m.st.Test; ts == nil || ts.Revision != 2 || ts.Result != api.TestFailed || "revision 2: "+ts.Message != c.Message {
		t.Errorf("status.test %+v", ts)
	}
	expectTrace(t, m.run(1), "TestFailed/Rollback")
	if c := m.cond(api.ConditionRemediated); !strings.Contains(c.Message, "rolled back to revision 1 after: the chart tests of revision 2 failed: test Pod ns/app-test failed") {
		t.Errorf("Remediated %q", c.Message)
	}
	if c := m.cond(api.ConditionReleased); c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonTestFailed) {
		t.Errorf("Released %+v", c)
	}
	if c := m.cond(api.ConditionTested); c.Status != metav1.ConditionFalse {
		t.Errorf("the rollback dropped the failed test's Tested: %+v", c)
	}
}

// A revision is tested once: the steady state runs no test, however often
// it is stepped; a new revision is tested again; turning tests off drops
// what they recorded.
func TestMachineChartTestsOncePerRevision(t *testing.T) {
	m := newMachine(t, withTests(watches.TestRemediate))
	expectTrace(t, m.run(5), "Absent/Install", "Untested/Test", "InSync")
	if c := m.cond(api.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Errorf("Ready %+v", c)
	}
	expectTrace(t, m.run(3), "InSync")
	m.setSpec("v2")
	expectTrace(t, m.run(5), "OutOfSync/Upgrade", "Untested/Test", "InSync")
	if m.st.Test == nil || m.st.Test.Revision != 2 {
		t.Errorf("status.test %+v", m.st.Test)
	}
	m.target.Watch.Policy.Test.Enable = false
	expectTrace(t, m.run(3), "InSync")
	if m.st.Test != nil || m.cond(api.ConditionTested).Type != "" {
		t.Errorf("tests off: status.test %+v, Tested %+v", m.st.Test, m.cond(api.ConditionTested))
	}
}

// An upgrade whose tests keep failing is rolled back, retried after the
// backoff and stalls once the retries are spent: a successful upgrade
// does not reset the count, so it cannot loop.
func TestMachineFailedTestRollsBackThenStalls(t *testing.T) {
	m := newMachine(t, withTests(watches.TestRemediate)) // retries: 2, backoff 10s doubling
	m.run(5)
	m.setValues(failingTest)
	m.rolledBackUntilStalled("OutOfSync/Upgrade", "Untested/Test!", "TestFailed/Rollback")
	// A spec whose tests pass goes through, and clears the count once tested.
	m.setSpec("v3")
	expectTrace(t, m.run(5), "OutOfSync/Upgrade", "Untested/Test", "InSync")
	if m.st.Failures != 0 || m.cond(api.ConditionRemediated).Status != "" || m.cond(api.ConditionTested).Status != metav1.ConditionTrue {
		t.Errorf("after a good upgrade: failures %d, conditions %+v", m.st.Failures, m.st.Conditions)
	}
}

// The failed tests of an upgrade with the uninstall strategy uninstall it.
func TestMachineFailedTestUninstallStrategy(t *testing.T) {
	m := newMachine(t, func(p *watches.Policy) {
		withTests(watches.TestRemediate)(p)
		p.UpgradeStrategy = watches.StrategyUninstall
	})
	m.run(5)
	m.setValues(failingTest)
	expectTrace(t, m.run(5), "OutOfSync/Upgrade", "Untested/Test!", "TestFailed/Uninstall", "Absent")
}

// A first install whose tests fail is kept and Stalled (nothing to go
// back to; readiness.remediateInstall: false); a reconcile request runs
// the tests again; with remediateInstall it is uninstalled and installed
// again, up to the retries.
func TestMachineFirstInstallFailedTest(t *testing.T) {
	m := newMachine(t, withTests(watches.TestRemediate))
	m.setValues(failingTest)
	expectTrace(t, m.run(5), "Absent/Install", "Untested/Test!", "Stalled")
	m.clock.Step(time.Hour)
	expectTrace(t, m.run(3), "Stalled")
	if c := m.cond(api.ConditionStalled); c.Reason != string(api.ReasonTestFailed) || !strings.Contains(c.Message, "readiness.remediateInstall") {
		t.Errorf("Stalled %+v", c)
	}
	if h := m.history(); strings.Join(h, " ") != "1:deployed" {
		t.Errorf("history %v: want the install kept", h)
	}
	m.obj.SetAnnotations(map[string]string{api.AnnotationReconcileRequestedAt: "again"})
	expectTrace(t, m.run(3), "Untested/Test!", "Stalled")
	expectTrace(t, m.run(3), "Stalled") // once per request

	m = newMachine(t, func(p *watches.Policy) {
		withTests(watches.TestRemediate)(p)
		p.RemediateInstall, p.Retries = true, 1
	})
	m.setValues(failingTest)
	expectTrace(t, m.run(5), "Absent/Install", "Untested/Test!", "TestFailed/Uninstall", "Absent")
	m.clock.Step(10 * time.Second)
	expectTrace(t, m.run(5), "Absent/Install", "Untested/Test!", "TestFailed/Uninstall", "Stalled")
}

// onFailure: report: the failed test is only reported; the release is
// Ready and stays; a reconcile request tests it again.
func TestMachineFailedTestReported(t *testing.T) {
	m := newMachine(t, withTests(watches.TestReport))
	m.run(5)
	m.setValues(failingTest)
	expectTrace(t, m.run(5), "OutOfSync/Upgrade", "Untested/Test!", "InSync")
	if c := m.cond(api.ConditionReady); c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "its chart tests failed (test.onFailure: report)") {
		t.Errorf("Ready %+v", c)
	}
	if c := m.cond(api.ConditionTested); c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonTestFailed) {
		t.Errorf("Tested %+v", c)
	}
	if m.st.Failures != 0 || m.cond(api.ConditionRemediated).Type != "" {
		t.Errorf("failures %d, Remediated %+v", m.st.Failures, m.cond(api.ConditionRemediated))
	}
	m.obj.SetAnnotations(map[string]string{api.AnnotationReconcileRequestedAt: "again"})
	expectTrace(t, m.run(3), "Untested/Test!", "InSync")
}
