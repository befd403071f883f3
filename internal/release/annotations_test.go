package release

import (
	"errors"
	"strings"
	"testing"
	"time"

	helmrelease "helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

func TestSteeringOf(t *testing.T) {
	const dom = api.HelmOperatorDomain
	tests := []struct {
		name    string
		anns    map[string]string
		check   func(steering) bool
		refused []string // substrings of the refusal; nil: none
	}{
		{"none", nil, func(s steering) bool { return !s.suspend && !s.holds() }, nil},
		{"suspend true", map[string]string{api.AnnotationSuspend: "true"}, func(s steering) bool { return s.suspend && s.holds() }, nil},
		{"suspend false", map[string]string{api.AnnotationSuspend: "false"}, func(s steering) bool { return !s.holds() }, nil},
		{"suspend other", map[string]string{api.AnnotationSuspend: "yes"}, func(s steering) bool { return !s.suspend && s.holds() },
			[]string{api.AnnotationSuspend, `"yes"`}},
		{"reconcile request", map[string]string{api.AnnotationReconcileRequestedAt: "now"}, func(s steering) bool { return s.reconcileRequest == "now" }, nil},
		{"disable hooks", map[string]string{dom + "install-disable-hooks": "true", dom + "upgrade-disable-hooks": "1", dom + "uninstall-disable-hooks": "false"},
			func(s steering) bool {
				return s.installDisableHooks && s.upgradeDisableHooks && !s.uninstallDisableHooks
			}, nil},
		{"force", map[string]string{dom + "upgrade-force": "true", dom + "rollback-force": "true"},
			func(s steering) bool { return s.upgradeForce && s.rollbackForce }, nil},
		{"descriptions", map[string]string{dom + "install-description": "a", dom + "upgrade-description": "b", dom + "uninstall-description": "c"},
			func(s steering) bool {
				return s.installDescription == "a" && s.upgradeDescription == "b" && s.uninstallDescription == "c"
			}, nil},
		{"uninstall-wait and reconcile-period", map[string]string{dom + "uninstall-wait": "false", dom + "reconcile-period": "30s"},
			func(s steering) bool {
				return s.uninstallWait != nil && !*s.uninstallWait && s.reconcilePeriod != nil && *s.reconcilePeriod == 30*time.Second
			}, nil},
		{"a bad boolean is refused", map[string]string{dom + "upgrade-force": "maybe"}, func(s steering) bool { return s.holds() },
			[]string{dom + "upgrade-force", `"maybe"`}},
		{"a bad period is refused", map[string]string{dom + "reconcile-period": "-1m"}, func(s steering) bool { return s.holds() },
			[]string{dom + "reconcile-period"}},
		{"an unknown annotation of the domain is refused", map[string]string{dom + "rollback-disable-hooks": "true"}, func(s steering) bool { return s.holds() },
			[]string{dom + "rollback-disable-hooks", "upgrade-force"}},
		{"every problem is named", map[string]string{dom + "x": "1", api.AnnotationSuspend: "on"}, func(s steering) bool { return s.holds() },
			[]string{dom + "x", api.AnnotationSuspend}},
		{"other domains are not ours", map[string]string{"example.com/x": "1", "chartkeeper.dev/drift": "warn"}, func(s steering) bool { return !s.holds() }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := steeringOf(tt.anns)
			if !tt.check(s) {
				t.Errorf("steering %+v", s)
			}
			if (s.refused != nil) != (tt.refused != nil) {
				t.Fatalf("refused = %v, want refusal: %v", s.refused, tt.refused != nil)
			}
			for _, w := range tt.refused {
				if !strings.Contains(s.refused.Error(), w) {
					t.Errorf("refusal %q does not say %q", s.refused, w)
				}
			}
		})
	}
}

func TestSteeringOverlay(t *testing.T) {
	p := 30 * time.Second
	f := false
	tg := Target{Watch: watches.Watch{Policy: watches.Policy{UninstallWait: true}}}
	got := (&steering{uninstallWait: &f, reconcilePeriod: &p}).overlay(tg)
	if got.Watch.Policy.UninstallWait || got.Watch.Period() != p {
		t.Errorf("overlay: %+v", got.Watch)
	}
	if !tg.Watch.Policy.UninstallWait || tg.Watch.ReconcilePeriod != nil {
		t.Errorf("the watch itself changed: %+v", tg.Watch)
	}
}

// Decide's suspend and refusal branches: nothing is done, whatever the
// release's state, except the uninstall of a deleted resource.
func TestDecideSuspendedAndRefused(t *testing.T) {
	const want, old = "want", "old"
	refused := errors.New("annotation x refused")
	tests := []struct {
		name string
		mod  func(*Observation)
		want Decision
	}{
		{"suspended absent does not install", func(o *Observation) { o.Suspended = true },
			Decision{State: StateSuspended, Reason: api.ReasonSuspended}},
		{"suspended out of sync does not upgrade", func(o *Observation) {
			o.Suspended, o.Latest = true, rev(2, helmrelease.StatusDeployed, old)
		}, Decision{State: StateSuspended, Reason: api.ReasonSuspended}},
		{"suspended failed is not remediated", func(o *Observation) {
			o.Suspended, o.Latest, o.PreviousDeployed = true, rev(3, helmrelease.StatusFailed, want), 2
		}, Decision{State: StateSuspended, Reason: api.ReasonSuspended}},
		{"suspended pending is not unlocked", func(o *Observation) {
			o.Suspended, o.Latest = true, rev(3, helmrelease.StatusPendingUpgrade, want)
		}, Decision{State: StateSuspended, Reason: api.ReasonSuspended}},
		{"suspended drift is not corrected", func(o *Observation) {
			o.Suspended, o.Latest = true, rev(2, helmrelease.StatusDeployed, want)
			o.Drift = []Drift{{Object: object{Name: "x"}, Change: DriftEdited}}
		}, Decision{State: StateSuspended, Reason: api.ReasonSuspended}},
		{"suspended leftovers are not pruned", func(o *Observation) {
			o.Suspended, o.Latest = true, rev(2, helmrelease.StatusDeployed, want)
			o.Leftovers = []object{{Name: "x"}}
		}, Decision{State: StateSuspended, Reason: api.ReasonSuspended}},
		{"suspended and deleted still uninstalls", func(o *Observation) {
			o.Suspended, o.Deleting, o.Latest = true, true, rev(2, helmrelease.StatusDeployed, want)
		}, Decision{State: StateDeleting, Action: ActionUninstall, Reason: api.ReasonDeleting}},
		{"a refused annotation stalls", func(o *Observation) {
			o.AnnotationError, o.Latest = refused, rev(2, helmrelease.StatusDeployed, old)
		}, Decision{State: StateStalled, Reason: api.ReasonAnnotationRefused}},
		{"a refusal wins over suspension", func(o *Observation) { o.AnnotationError, o.Suspended = refused, true },
			Decision{State: StateStalled, Reason: api.ReasonAnnotationRefused}},
		{"a refused annotation does not stop deletion", func(o *Observation) {
			o.AnnotationError, o.Deleting, o.Latest = refused, true, rev(2, helmrelease.StatusDeployed, want)
		}, Decision{State: StateDeleting, Action: ActionUninstall, Reason: api.ReasonDeleting}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Observation{Now: t0, DesiredDigest: want, Ready: true}
			tt.mod(&o)
			got := Decide(o, defaultPolicy())
			if got.State != tt.want.State || got.Action != tt.want.Action || got.Reason != tt.want.Reason || got.RequeueAfter != 0 {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			if got.Reason == api.ReasonSuspended && !strings.Contains(got.Message, api.AnnotationSuspend) {
				t.Errorf("the message does not say how to resume: %q", got.Message)
			}
		})
	}
}

// A reconcile request not handled yet drops the failure bookkeeping (a
// fresh budget); one already handled, or made while suspended or deleted,
// does not.
func TestObserveSteeringReconcileRequest(t *testing.T) {
	failed := Observation{Failures: 3, FailedDigest: "d", LastFailure: t0, LastFailureMessage: "boom"}
	tests := []struct {
		name     string
		s        steering
		handled  string
		deleting bool
		fresh    bool
	}{
		{"new request", steering{reconcileRequest: "1"}, "", false, true},
		{"another request", steering{reconcileRequest: "2"}, "1", false, true},
		{"handled already", steering{reconcileRequest: "1"}, "1", false, false},
		{"no request", steering{}, "1", false, false},
		{"suspended", steering{reconcileRequest: "2", suspend: true}, "1", false, false},
		{"refused", steering{reconcileRequest: "2", refused: errors.New("x")}, "1", false, false},
		{"deleting", steering{reconcileRequest: "2"}, "1", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := failed
			o.Deleting = tt.deleting
			o.observeSteering(tt.s, &api.Status{LastHandledReconcileAt: tt.handled})
			if got := o.ReconcileRequest != "" && o.Failures == 0 && o.FailedDigest == "" && o.LastFailure.IsZero() && o.LastFailureMessage == ""; got != tt.fresh {
				t.Errorf("fresh budget = %v, want %v: %+v", got, tt.fresh, o)
			}
			if !tt.fresh && (o.Failures != 3 || o.ReconcileRequest != "") {
				t.Errorf("bookkeeping changed: %+v", o)
			}
		})
	}
}

// A resource stalled with its retries spent is tried again once per new
// reconcile-requested-at value, which status.lastHandledReconcileAt then
// shows; a chart error is tried again too.
func TestMachineReconcileRequest(t *testing.T) {
	m := newMachine(t, func(p *watches.Policy) { p.Retries = 0 })
	m.run(5)
	m.setSpec("fail-me")
	expectTrace(t, m.run(5), "OutOfSync/Upgrade!", "Failed/Rollback", "Stalled")
	m.clock.Step(time.Hour)
	expectTrace(t, m.run(5), "Stalled")

	m.obj.SetAnnotations(map[string]string{api.AnnotationReconcileRequestedAt: "first"})
	expectTrace(t, m.run(5), "OutOfSync/Upgrade!", "Failed/Rollback", "Stalled")
	if m.st.LastHandledReconcileAt != "first" || m.st.Failures != 1 {
		t.Errorf("lastHandledReconcileAt %q, failures %d", m.st.LastHandledReconcileAt, m.st.Failures)
	}
	m.clock.Step(time.Hour)
	expectTrace(t, m.run(5), "Stalled") // handled: once per value

	// A chart error (nothing stored) is terminal, until a request.
	m.setSpec("v2")
	m.helm.fail = map[string]error{"Upgrade": errors.New(`template: app/templates/cm.yaml: nope`)}
	expectTrace(t, m.run(5), "OutOfSync/Upgrade!", "Stalled")
	if m.st.TerminalError == "" {
		t.Fatalf("no terminal error: %+v", m.st)
	}
	m.helm.fail = nil
	expectTrace(t, m.run(5), "Stalled")
	m.obj.SetAnnotations(map[string]string{api.AnnotationReconcileRequestedAt: "second"})
	expectTrace(t, m.run(5), "OutOfSync/Upgrade", "InSync")
	if m.st.LastHandledReconcileAt != "second" || m.st.TerminalError != "" {
		t.Errorf("status %+v", m.st)
	}
}

// While suspended nothing is released, Ready is False Suspended with
// neither Reconciling nor Stalled; resuming releases the change; a
// suspended resource that is deleted is uninstalled.
func TestMachineSuspend(t *testing.T) {
	m := newMachine(t, nil)
	expectTrace(t, m.run(5), "Absent/Install", "InSync")
	m.obj.SetAnnotations(map[string]string{api.AnnotationSuspend: "true"})
	m.setSpec("v2")
	expectTrace(t, m.run(5), "Suspended")
	if c := m.cond(api.ConditionReady); c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonSuspended) {
		t.Errorf("Ready %+v", c)
	}
	if m.cond(api.ConditionReconciling).Status != "" || m.cond(api.ConditionStalled).Status != "" {
		t.Errorf("conditions %+v", m.st.Conditions)
	}
	if c := m.cond(api.ConditionReleased); c.Status != metav1.ConditionTrue {
		t.Errorf("Released changed while suspended: %+v", c)
	}
	if m.st.ObservedGeneration != 2 {
		t.Errorf("observedGeneration %d", m.st.ObservedGeneration)
	}
	if h := m.history(); strings.Join(h, " ") != "1:deployed" {
		t.Errorf("history while suspended %v", h)
	}
	m.obj.SetAnnotations(nil)
	expectTrace(t, m.run(5), "OutOfSync/Upgrade", "InSync")

	m.obj.SetAnnotations(map[string]string{api.AnnotationSuspend: "true"})
	now := metav1.NewTime(t0)
	m.obj.SetDeletionTimestamp(&now)
	m.sc.missing = map[string]bool{"app": true}
	expectTrace(t, m.run(5), "Deleting/Uninstall", "Deleting")
	if len(m.history()) != 0 {
		t.Errorf("history after deletion %v", m.history())
	}
}

// A refused annotation stalls the resource with AnnotationRefused naming it.
func TestMachineRefusedAnnotation(t *testing.T) {
	m := newMachine(t, nil)
	m.obj.SetAnnotations(map[string]string{api.HelmOperatorDomain + "upgrade-wait": "true"})
	expectTrace(t, m.run(5), "Stalled")
	c := m.cond(api.ConditionStalled)
	if c.Reason != string(api.ReasonAnnotationRefused) || !strings.Contains(c.Message, api.HelmOperatorDomain+"upgrade-wait") {
		t.Errorf("Stalled %+v", c)
	}
	if len(m.history()) != 0 {
		t.Errorf("installed: %v", m.history())
	}
}

// A resource's approval annotation may make approval manual; it lifts a
// manual approval only where the watch allows it, else it is refused.
func TestSteeringApprovalOverlay(t *testing.T) {
	manual, auto := watches.ApprovalManual, watches.ApprovalAuto
	tests := []struct {
		name       string
		watch      watches.Approval
		allow      bool
		annotation string
		want       watches.Approval
		refused    bool
	}{
		{"no annotation keeps the watch's", manual, false, "", manual, false},
		{"manual tightens auto", auto, false, "manual", manual, false},
		{"auto on auto", auto, false, "auto", auto, false},
		{"manual on manual", manual, false, "manual", manual, false},
		{"auto may not lift manual", manual, false, "auto", manual, true},
		{"auto lifts manual where the watch allows it", manual, true, "auto", auto, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			anns := map[string]string{}
			if tt.annotation != "" {
				anns[api.AnnotationApproval] = tt.annotation
			}
			s := steeringOf(anns)
			got := s.overlay(Target{Watch: watches.Watch{Policy: watches.Policy{Approval: tt.watch, AllowResourceAutoApproval: tt.allow}}})
			if got.Watch.Policy.Approval != tt.want {
				t.Errorf("approval %q, want %q", got.Watch.Policy.Approval, tt.want)
			}
			if (s.refused != nil) != tt.refused || s.holds() != tt.refused {
				t.Fatalf("refused %v, want a refusal: %v", s.refused, tt.refused)
			}
			if tt.refused && (!strings.Contains(s.refused.Error(), api.AnnotationApproval) || !strings.Contains(s.refused.Error(), "allowResourceAutoApproval")) {
				t.Errorf("the refusal %q names neither the annotation nor the watch field", s.refused)
			}
		})
	}
}
