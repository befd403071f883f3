package watches

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestOnFailure says what a failed chart test leads to (test.onFailure).
type TestOnFailure string

// The values of test.onFailure.
const (
	// TestRemediate (default): a failed test of an upgrade is remediated as
	// a failed upgrade (rolled back, or uninstalled, per
	// remediation.strategy; counted toward remediation.retries); a failed
	// test of a first install as a first install not ready in time (kept
	// and reported, unless readiness.remediateInstall).
	TestRemediate TestOnFailure = "remediate"
	// TestReport: a failed test only sets the Tested condition False; the
	// release stays as it is, Ready as its objects are.
	TestReport TestOnFailure = "report"
)

// Test is a watch's test field: the chart's tests (its helm.sh/hook: test
// hooks, what helm test runs) as a gate after each install and upgrade.
type Test struct {
	// Enable runs the tests once per revision, when the release is ready.
	// Default false.
	Enable bool `json:"enable,omitempty"`
	// Timeout bounds a run of the tests. Default: the watch's timeout.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// OnFailure: TestRemediate (default) or TestReport.
	OnFailure TestOnFailure `json:"onFailure,omitempty"`
}

// TestPolicy is a watch's resolved test setting.
type TestPolicy struct {
	// Enable: the chart's tests run once per revision, once it is ready.
	Enable bool
	// Timeout bounds a run of the tests.
	Timeout time.Duration
	// OnFailure says what a failed test leads to.
	OnFailure TestOnFailure
}

// resolve applies the defaults (actionTimeout: the watch's timeout) and
// validates the test setting.
func (t *Test) resolve(actionTimeout time.Duration, add func(field, format string, args ...any)) TestPolicy {
	p := TestPolicy{Timeout: actionTimeout, OnFailure: TestRemediate}
	if t == nil {
		return p
	}
	p.Enable = t.Enable
	if t.Timeout != nil {
		p.Timeout = t.Timeout.Duration
		if p.Timeout <= 0 {
			add("test.timeout", "must be a positive duration, got %s", p.Timeout)
		}
	}
	switch t.OnFailure {
	case "":
	case TestRemediate, TestReport:
		p.OnFailure = t.OnFailure
	default:
		add("test.onFailure", "%q is not a test failure policy: use %q (default: a failed upgrade's tests roll it back, as a failed upgrade) or %q (only the Tested condition says so)",
			t.OnFailure, TestRemediate, TestReport)
	}
	return p
}
