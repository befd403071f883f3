package release

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// steering is what a custom resource's annotations ask of its release
// (docs/annotations.md): chartkeeper's own (suspend, reconcile-requested-at)
// and the per-resource annotations of helm-operator-plugins v0.9.1 and of
// operator-sdk's Helm operator, each honoured or refused, never ignored.
type steering struct {
	// suspend: chartkeeper.dev/suspend is "true".
	suspend bool
	// reconcileRequest is the value of chartkeeper.dev/reconcile-requested-at.
	reconcileRequest string
	// The Helm options of each action.
	installDisableHooks, upgradeDisableHooks, uninstallDisableHooks bool
	upgradeForce, rollbackForce                                     bool
	installDescription, upgradeDescription, uninstallDescription    string
	// uninstallWait, reconcilePeriod and approval override the watch's
	// (nil, "": keep it).
	uninstallWait   *bool
	reconcilePeriod *time.Duration
	approval        watches.Approval
	// refused says which annotations are refused and why (nil: none);
	// problems are its parts.
	refused  error
	problems []string
}

// refuse records that annotation name is refused, and why.
func (s *steering) refuse(name, format string, args ...any) {
	s.problems = append(s.problems, fmt.Sprintf("annotation %s refused: %s", name, fmt.Sprintf(format, args...)))
	s.refused = errors.New(strings.Join(s.problems, "; ") + "; nothing is released until it is fixed")
}

// helmOperatorAnnotation is one per-resource annotation of the
// helm.sdk.operatorframework.io domain that chartkeeper honours.
type helmOperatorAnnotation struct {
	name  string // without the domain
	parse func(s *steering, v string) error
}

// helmOperatorAnnotations are every per-resource annotation of
// helm-operator-plugins v0.9.1 (pkg/annotation: the install, upgrade and
// uninstall description and disable-hooks, upgrade-force) and of
// operator-sdk's Helm operator (rollback-force, uninstall-wait,
// reconcile-period).
var helmOperatorAnnotations = []helmOperatorAnnotation{
	{"install-disable-hooks", boolInto(func(s *steering) *bool { return &s.installDisableHooks })},
	{"upgrade-disable-hooks", boolInto(func(s *steering) *bool { return &s.upgradeDisableHooks })},
	{"uninstall-disable-hooks", boolInto(func(s *steering) *bool { return &s.uninstallDisableHooks })},
	{"upgrade-force", boolInto(func(s *steering) *bool { return &s.upgradeForce })},
	{"rollback-force", boolInto(func(s *steering) *bool { return &s.rollbackForce })},
	{"install-description", func(s *steering, v string) error { s.installDescription = v; return nil }},
	{"upgrade-description", func(s *steering, v string) error { s.upgradeDescription = v; return nil }},
	{"uninstall-description", func(s *steering, v string) error { s.uninstallDescription = v; return nil }},
	{"uninstall-wait", func(s *steering, v string) error {
		b, err := parseBool(v)
		s.uninstallWait = &b
		return err
	}},
	{"reconcile-period", func(s *steering, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("must be a duration of zero or more (e.g. 5m), got %q", v)
		}
		s.reconcilePeriod = &d
		return nil
	}},
}

func boolInto(field func(*steering) *bool) func(*steering, string) error {
	return func(s *steering, v string) error {
		b, err := parseBool(v)
		*field(s) = b
		return err
	}
}

func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf(`must be "true" or "false", got %q`, v)
	}
	return b, nil
}

// steeringOf reads the annotations of a custom resource. Every problem is
// collected in refused, each naming its annotation.
func steeringOf(annotations map[string]string) steering {
	var s steering
	refuse := s.refuse
	switch v, ok := annotations[api.AnnotationSuspend]; {
	case !ok || v == "false":
	case v == "true":
		s.suspend = true
	default:
		refuse(api.AnnotationSuspend, `must be "true" or "false", got %q`, v)
	}
	s.reconcileRequest = annotations[api.AnnotationReconcileRequestedAt]
	if v, ok := annotations[api.AnnotationApproval]; ok {
		a, err := watches.ParseApproval(v)
		if err != nil {
			refuse(api.AnnotationApproval, "%v", err)
		}
		s.approval = a
	}
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		if strings.HasPrefix(k, api.HelmOperatorDomain) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		i := slices.IndexFunc(helmOperatorAnnotations, func(a helmOperatorAnnotation) bool { return api.HelmOperatorDomain+a.name == k })
		if i < 0 {
			refuse(k, "not one of helm-operator-plugins' per-resource annotations chartkeeper knows (%s); remove it or fix its name", knownHelmOperatorAnnotations())
			continue
		}
		if err := helmOperatorAnnotations[i].parse(&s, annotations[k]); err != nil {
			refuse(k, "%v", err)
		}
	}
	return s
}

func knownHelmOperatorAnnotations() string {
	names := make([]string, len(helmOperatorAnnotations))
	for i, a := range helmOperatorAnnotations {
		names[i] = a.name
	}
	return strings.Join(names, ", ")
}

// holds reports whether the annotations stop every action of a resource
// not being deleted: suspended, or an annotation refused.
func (s steering) holds() bool { return s.suspend || s.refused != nil }

// overlay applies the per-resource overrides of the watch's policy
// (uninstall-wait, reconcile-period, approval) to the step's copy of its
// target. An approval annotation may make approval manual; it may lift the
// watch's manual approval only where the watch allows it
// (upgrade.allowResourceAutoApproval): elsewhere it is refused.
func (s *steering) overlay(t Target) Target {
	if s.uninstallWait != nil {
		t.Watch.Policy.UninstallWait = *s.uninstallWait
	}
	if s.reconcilePeriod != nil {
		t.Watch.ReconcilePeriod = &metav1.Duration{Duration: *s.reconcilePeriod}
	}
	switch p := t.Watch.Policy; {
	case s.approval == "":
	case s.approval == watches.ApprovalAuto && p.Approval == watches.ApprovalManual && !p.AllowResourceAutoApproval:
		s.refuse(api.AnnotationApproval, `%q would lift the watch's manual approval, which the watch does not allow (upgrade.allowResourceAutoApproval); a resource may only make approval manual`, s.approval)
	default:
		t.Watch.Policy.Approval = s.approval
	}
	return t
}

// observeSteering fills the observation from the annotations: suspended,
// refused, and a reconcile request not handled yet, which gives the desired
// digest a fresh retry budget (the failure bookkeeping read from the status
// is dropped, and with it the terminal chart error; see recordReconcileRequest).
func (o *Observation) observeSteering(s steering, st *api.Status) {
	o.Suspended, o.AnnotationError = s.suspend, s.refused
	if s.reconcileRequest == "" || s.reconcileRequest == st.LastHandledReconcileAt || o.Deleting || s.holds() {
		return
	}
	o.ReconcileRequest = s.reconcileRequest
	o.Failures, o.FailedDigest, o.LastFailure, o.LastFailureMessage = 0, "", time.Time{}, ""
}

// recordReconcileRequest records a reconcile request the observation
// handles: status.lastHandledReconcileAt holds its value, and the failure
// count and terminal chart error are reset (a fresh retry budget).
func (s *step) recordReconcileRequest() {
	st := s.st
	if s.o.ReconcileRequest == "" {
		return
	}
	st.LastHandledReconcileAt = s.o.ReconcileRequest
	s.failuresCleared()
	st.TerminalError, st.TerminalDigest, st.TerminalReason = "", "", ""
}
