package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	helmrelease "helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// Manual approval (docs/plan-approve.md). With upgrade.approval: manual
// (the watch's, or the resource's chartkeeper.dev/approval annotation), a
// change of the desired chart or values does not upgrade the release:
// the plan action asks the API server what the upgrade would change (dry
// runs against the live objects: helm.Client.Plan) and writes it to
// status.plan with its digest; nothing else is done. The annotation
// chartkeeper.dev/approve set to that digest lets exactly that upgrade
// happen: the digest covers the desired chart and values and the revision
// they upgrade, so any other change makes a new plan, and the old
// approval is refused (ApprovalStale).

// planDigest identifies the upgrade of revision from to the desired
// digest.
func planDigest(desired string, from int) string {
	sum := sha256.Sum256([]byte(desired + "\x00" + strconv.Itoa(from)))
	return hex.EncodeToString(sum[:])[:16]
}

// observeApproval fills the observation's approval fields: whether
// upgrades wait for approval, the plan the desired values would make, the
// plan status.plan holds, and the digest the resource approves (none once
// that plan was applied).
func (o *Observation) observeApproval(approval watches.Approval, annotations map[string]string, st *api.Status) {
	o.ManualApproval = approval == watches.ApprovalManual
	if !o.ManualApproval || o.Latest == nil {
		return
	}
	o.PlanDigest = planDigest(o.DesiredDigest, o.Latest.Version)
	if st.Plan != nil {
		o.Planned = st.Plan.Digest
	}
	if a := annotations[api.AnnotationApprove]; a != st.AppliedPlan {
		o.Approved = a
	}
}

// approvalGate holds an upgrade to the desired chart and values until its
// plan is approved: it has the plan written first (ActionPlan), then waits
// for the approval, refusing one of another plan. held is false when
// approval is not manual or this plan is approved.
func approvalGate(o Observation) (d Decision, held bool) {
	if !o.ManualApproval || o.Approved == o.PlanDigest {
		return Decision{}, false
	}
	how := fmt.Sprintf("review status.plan, then approve it: kubectl annotate --overwrite <kind> <name> %s=%s", api.AnnotationApprove, o.PlanDigest)
	d = Decision{State: StateAwaitingApproval, Reason: api.ReasonAwaitingApproval,
		Message: fmt.Sprintf("the upgrade of revision %d to the desired chart and values awaits approval of plan %s; %s", o.Latest.Version, o.PlanDigest, how)}
	if o.Planned != o.PlanDigest {
		d.Action = ActionPlan
		return d, true
	}
	if o.Approved != "" {
		d.Reason = api.ReasonApprovalStale
		d.Message = fmt.Sprintf("the approved plan %s is not the current plan %s (the spec, chart or release changed since it was made): nothing was upgraded; %s", o.Approved, o.PlanDigest, how)
	}
	return d, true
}

// plan computes the upgrade's plan and writes it to status.plan (the
// action of StateAwaitingApproval when status.plan is not the current
// plan). It stores no revision.
type plan struct {
	unhooked
	made *api.PlanStatus
}

func (*plan) kind() ActionKind { return ActionPlan }

func (p *plan) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	hp, err := s.e.planOf(ctx, s)
	if err != nil {
		return nil, err
	}
	p.made = planStatus(hp, s.o.PlanDigest, s.t.Watch)
	return nil, nil
}

// succeeded: status.plan holds the plan, PlanReady True Planned says what
// it changes, and an Event says so.
func (p *plan) succeeded(s *step, _ outcome) {
	s.st.Plan = p.made
	msg := fmt.Sprintf("plan %s upgrades revision %d: %s", p.made.Digest, p.made.FromRevision, planSummary(p.made))
	s.setCondition(api.ConditionPlanReady, metav1.ConditionTrue, api.ReasonPlanned, msg)
	s.eventf(false, api.ReasonPlanned, "%s", msg)
}

// failed: PlanReady False PlanFailed; not counted toward remediation,
// backed off like any failure.
func (p *plan) failed(s *step, out outcome, err error) bool {
	s.st.Plan = nil
	s.setCondition(api.ConditionPlanReady, metav1.ConditionFalse, api.ReasonPlanFailed, fmt.Sprintf("computing the plan failed: %v", err))
	return s.failure(p, out, err, api.ReasonPlanFailed, false)
}

// planOf asks Helm for the plan of the step's upgrade. The request is the
// upgrade's, but rendering applies nothing: the CRD step (crds.go) is
// planned, not run (crdplan.go).
func (e *Engine) planOf(ctx context.Context, s *step) (*helm.Plan, error) {
	r, err := s.request(ctx)
	if err != nil {
		return nil, err
	}
	var templated []*unstructured.Unstructured
	collectCRDs(&r, &templated)
	r.Timeout = s.t.Watch.Policy.Timeout
	p, err := e.helm.Plan(ctx, r)
	if err != nil {
		return nil, err
	}
	crds, err := s.crdChanges(ctx, templated)
	if err != nil {
		return nil, err
	}
	p.Changes = append(crds, p.Changes...)
	return p, nil
}

// settlePlan keeps status.plan and PlanReady only while an upgrade awaits
// approval (called once a step is decided and done).
func (s *step) settlePlan() {
	if s.dec.State == StateAwaitingApproval {
		return
	}
	s.st.Plan = nil
	s.dropCondition(api.ConditionPlanReady)
}

// planApplied records that the approved plan was applied (by an upgrade
// that succeeded), so that its approval approves nothing more.
func (s *step) planApplied() {
	if s.o.ManualApproval && s.o.Approved != "" && s.o.Approved == s.o.PlanDigest {
		s.st.AppliedPlan = s.o.Approved
	}
}

// maxPlanEntries bounds the objects and fields status.plan lists; the
// rest is counted in Omitted (chartkeeper diff prints everything).
const maxPlanEntries = 100

// planStatus is the plan as status.plan shows it: objects and changed
// fields, never values (of a Secret or anything else).
func planStatus(p *helm.Plan, digest string, w watches.Watch) *api.PlanStatus {
	out := &api.PlanStatus{Digest: digest, FromRevision: p.From,
		Chart: w.Chart.Metadata.Name + "-" + w.Chart.Metadata.Version}
	room := maxPlanEntries
	for _, ch := range p.Changes {
		obj := api.PlannedObject{APIVersion: ch.GVK.GroupVersion().String(), Kind: ch.GVK.Kind, Namespace: ch.Namespace, Name: ch.Name}
		if ch.Action == helm.ChangeUpdate {
			obj.Fields = ChangedFields(ch.Before, ch.After)
		}
		if room <= 0 {
			out.Omitted += 1 + len(obj.Fields)
			continue
		}
		room-- // the object
		if len(obj.Fields) > room {
			out.Omitted += len(obj.Fields) - room
			obj.Fields = obj.Fields[:room]
		}
		room -= len(obj.Fields)
		switch ch.Action {
		case helm.ChangeCreate:
			out.Create = append(out.Create, obj)
		case helm.ChangeUpdate:
			out.Update = append(out.Update, obj)
		case helm.ChangeDelete:
			out.Delete = append(out.Delete, obj)
		case helm.ChangeKeep:
			out.Keep = append(out.Keep, obj)
		}
	}
	return out
}

// planSummary counts a plan's objects.
func planSummary(p *api.PlanStatus) string {
	msg := fmt.Sprintf("%d to create, %d to update, %d to delete", len(p.Create), len(p.Update), len(p.Delete))
	if len(p.Keep) > 0 {
		msg += fmt.Sprintf(", %d kept though the chart drops them", len(p.Keep))
	}
	if p.Omitted > 0 {
		msg += fmt.Sprintf(" (%d more objects or fields not listed)", p.Omitted)
	}
	return msg
}

// volatileFields are what the API server changes on any write, or what
// no chart sets: left out of a plan's comparison.
var volatileFields = []string{"/metadata/resourceVersion", "/metadata/generation", "/metadata/managedFields",
	"/metadata/creationTimestamp", "/metadata/uid", "/status"}

// ChangedFields lists the fields where after differs from before, as JSON
// pointers, leaving out those every write changes.
func ChangedFields(before, after *unstructured.Unstructured) []string {
	var out []string
	for _, d := range diffFields(before.Object, after.Object) {
		if !underAny(d.Path, volatileFields) {
			out = append(out, d.Path)
		}
	}
	return out
}

func underAny(path string, pointers []string) bool {
	for _, p := range pointers {
		if under(path, p) {
			return true
		}
	}
	return false
}
