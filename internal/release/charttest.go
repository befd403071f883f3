package release

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	helmrelease "helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// chartTest runs the chart's tests (its helm.sh/hook: test hooks, what
// helm test runs) against the revision deployed from the desired digest
// once it is ready: the action of StateUntested, once per revision, when
// the watch enables them (test.enable). It records the outcome in
// status.test and the Tested condition; Decide acts on a failure at the
// next step (remediate, or report: see decideTests). The test hooks'
// objects are deleted after the run (internal/helm).
type chartTest struct {
	unhooked
	// ran is what the run found.
	ran helm.TestRun
}

func (*chartTest) kind() ActionKind { return ActionTest }

func (t *chartTest) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	g := s.guard(ctx, admitScope(s.t.Watch.Scope, s.d.ref.Namespace))
	g.Timeout = s.t.Watch.Policy.Test.Timeout
	var err error
	t.ran, err = s.e.helm.Test(ctx, s.d.ref.Name, s.d.ref.Namespace, g)
	return nil, err
}

// succeeded: status.test records the revision as tested, Event and Tested
// True TestSucceeded naming the tests.
func (t *chartTest) succeeded(s *step, out outcome) {
	names := make([]string, len(t.ran.Tests))
	for i, h := range t.ran.Tests {
		names[i] = h.Name
	}
	msg := "the chart has no test hooks"
	if len(names) > 0 {
		msg = "tests passed: " + strings.Join(names, ", ")
	}
	t.record(s, out, api.TestSucceeded, api.ReasonTestSucceeded, msg)
}

// failed: a transient error (API server trouble) retries the step; the
// operator's RBAC refusing the test hooks, or a release that could not be
// read, is no verdict on the release (Tested Unknown Forbidden or
// TestFailed, backed off, retried); any other failure is
// the tests' verdict: status.test records the revision as failed, Event
// and Tested False TestFailed naming the test and why it failed, and,
// when the watch remediates failed tests, a failure counted toward
// remediation.retries (Decide remediates it at the next step).
func (t *chartTest) failed(s *step, out outcome, err error) bool {
	if IsTransient(err) {
		return s.failure(t, out, err, api.ReasonTestFailed, false)
	}
	if helm.RBACRefused(err.Error()) {
		s.setCondition(api.ConditionTested, metav1.ConditionUnknown, api.ReasonForbidden, s.heldBack(t, api.ReasonForbidden, err))
		return false
	}
	if t.ran.Revision == 0 { // the release could not be read: nothing was tested
		why := fmt.Sprintf("%s failed: %v", t.kind(), err)
		left := s.backOff(string(t.kind()), why, 0)
		s.eventf(true, api.ReasonTestFailed, "%s; retrying in %s", why, left.Round(time.Second))
		s.setCondition(api.ConditionTested, metav1.ConditionUnknown, api.ReasonTestFailed, why)
		return false
	}
	msg := testFailure(t.ran, s.d.ref.Namespace, err)
	t.record(s, out, api.TestFailed, api.ReasonTestFailed, msg)
	if s.t.Watch.Policy.Test.OnFailure == watches.TestRemediate {
		s.countFailure(fmt.Sprintf("%s of revision %d failed: %s", t.kind(), t.ran.Revision, msg))
	}
	return false
}

// record writes a run's verdict: status.test, the Tested condition and an
// Event (a leftover test hook the run could not delete is named too).
func (t *chartTest) record(s *step, out outcome, result api.TestResult, reason api.Reason, msg string) {
	s.st.Test = &api.TestStatus{Revision: t.ran.Revision, Result: result, Message: s.d.redact.Redact(msg), Time: &out.now}
	cond := metav1.ConditionTrue
	if result != api.TestSucceeded {
		cond = metav1.ConditionFalse
	}
	msg = fmt.Sprintf("revision %d: %s", t.ran.Revision, msg)
	s.setCondition(api.ConditionTested, cond, reason, msg)
	if err := t.ran.Cleanup; err != nil {
		msg += fmt.Sprintf(" (test hooks not deleted: %v)", err)
	}
	s.eventf(result != api.TestSucceeded, reason, "%s", msg)
}

// testFailure says which test failed and why: the test hook Helm recorded
// as failed and, for a Pod, what its status said; else Helm's error.
func testFailure(run helm.TestRun, ns string, err error) string {
	for _, h := range run.Tests {
		if h.Phase != helmrelease.HookPhaseFailed {
			continue
		}
		msg := fmt.Sprintf("test %s %s/%s failed", h.Kind, ns, h.Name)
		var te *helm.TimeoutError
		if errors.As(err, &te) {
			msg = fmt.Sprintf("test %s %s/%s did not finish within %s", h.Kind, ns, h.Name, te.After)
		}
		if h.Why != "" {
			return msg + ": " + h.Why
		}
		return fmt.Sprintf("%s: %v", msg, err)
	}
	return err.Error()
}

// testsOff drops what an earlier run of the chart's tests recorded once the
// watch no longer runs them.
func (s *step) testsOff() {
	if !s.t.Watch.Policy.Test.Enable {
		s.st.Test = nil
		s.dropCondition(api.ConditionTested)
	}
}

// untested forgets the tests of an earlier revision: a new one is tested
// afresh (releasedDesired).
func (s *step) untested() {
	s.st.Test = nil
	s.dropCondition(api.ConditionTested)
}
