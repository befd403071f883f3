package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
// happen. The digest binds what was shown to what is upgraded: its first
// half (planInputs) covers what the upgrade is made from and for (the
// desired chart and values, the revision they upgrade, the resource's UID,
// the release, the account it runs as and the annotations that change the
// upgrade), its second half the planned changes as well. Any other
// change makes a new plan, and the old approval is refused
// (ApprovalStale): an approval of one resource's plan approves no other
// resource's, nor a resource recreated under the same name.

// inputsLen and changesLen are the lengths (hex digits) of a plan
// digest's two halves.
const inputsLen, changesLen = 12, 12

// planInputs identifies what an upgrade of revision from is made from
// and for: the desired digest (chart and values), the revision, the
// resource (its UID: a resource recreated under the same name is another),
// the release, the account its actions impersonate, and the annotations
// that change the upgrade action (upgrade-force, upgrade-disable-hooks,
// upgrade-description).
func planInputs(obj *unstructured.Unstructured, d desired, sg steering, from int) string {
	account := ""
	if !d.account.IsZero() {
		account = d.account.UserName()
	}
	h := sha256.New()
	for _, part := range []string{d.digest, strconv.Itoa(from), string(obj.GetUID()), d.ref.Namespace, d.ref.Name, account,
		strconv.FormatBool(sg.upgradeForce), strconv.FormatBool(sg.upgradeDisableHooks), sg.upgradeDescription} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:inputsLen]
}

// planDigest is the digest of the plan of changes made for inputs: the
// inputs, then a digest of them and of every change (its action, object
// and changed fields; no values: they are the desired values'), so that
// whether status.plan was made for the current inputs can be told
// without planning again.
func planDigest(inputs string, changes []helm.Change) string {
	lines := make([]string, 0, len(changes))
	for _, ch := range changes {
		line := fmt.Sprintf("%s %s %s %s/%s", ch.Action, ch.GVK.GroupVersion(), ch.GVK.Kind, ch.Namespace, ch.Name)
		if ch.Action == helm.ChangeUpdate {
			line += " " + strings.Join(ChangedFields(ch.Before, ch.After), " ")
		}
		lines = append(lines, line)
	}
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(inputs + "\x00" + strings.Join(lines, "\n")))
	return inputs + hex.EncodeToString(sum[:])[:changesLen]
}

// planMadeFor reports whether the plan of digest was made for inputs.
func planMadeFor(digest, inputs string) bool {
	return len(digest) == inputsLen+changesLen && strings.HasPrefix(digest, inputs)
}

// observeApproval fills the observation's approval fields: whether
// upgrades wait for approval, what the plan of the desired values would
// be made for, the plan status.plan holds if it was made for that, and the
// digest the resource approves (none once that plan was applied).
func (o *Observation) observeApproval(approval watches.Approval, obj *unstructured.Unstructured, d desired, sg steering, st *api.Status) {
	o.ManualApproval = approval == watches.ApprovalManual
	if !o.ManualApproval || o.Latest == nil {
		return
	}
	o.PlanInputs = planInputs(obj, d, sg, o.Latest.Version)
	if st.Plan != nil && planMadeFor(st.Plan.Digest, o.PlanInputs) {
		o.Planned = st.Plan.Digest
	}
	if a := obj.GetAnnotations()[api.AnnotationApprove]; a != st.AppliedPlan {
		o.Approved = a
	}
}

// approvalGate holds an upgrade to the desired chart and values until its
// plan is approved: it has the plan written first (ActionPlan), then waits
// for the approval, refusing one of another plan. held is false when
// approval is not manual or the current plan is approved.
func approvalGate(o Observation) (d Decision, held bool) {
	if !o.ManualApproval || o.Planned != "" && o.Approved == o.Planned {
		return Decision{}, false
	}
	if o.Planned == "" {
		return Decision{State: StateAwaitingApproval, Reason: api.ReasonAwaitingApproval, Action: ActionPlan,
			Message: fmt.Sprintf("the upgrade of revision %d to the desired chart and values awaits approval; planning it", o.Latest.Version)}, true
	}
	d = Decision{State: StateAwaitingApproval, Reason: api.ReasonAwaitingApproval, Message: awaitingMessage(o.Latest.Version, o.Planned)}
	if o.Approved != "" {
		d.Reason = api.ReasonApprovalStale
		d.Message = fmt.Sprintf("the approved plan %s is not the current plan %s (the spec, chart, release, account, resource or upgrade annotations changed since it was made, or it is another resource's): nothing was upgraded; %s",
			o.Approved, o.Planned, howToApprove(o.Planned))
	}
	return d, true
}

// awaitingMessage says that the upgrade of revision from awaits approval
// of plan digest, and how to approve it.
func awaitingMessage(from int, digest string) string {
	return fmt.Sprintf("the upgrade of revision %d to the desired chart and values awaits approval of plan %s; %s", from, digest, howToApprove(digest))
}

func howToApprove(digest string) string {
	return fmt.Sprintf("review status.plan, then approve it: kubectl annotate --overwrite <kind> <name> %s=%s", api.AnnotationApprove, digest)
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
	p.made = planStatus(hp, planDigest(s.o.PlanInputs, hp.Changes), s.t.Watch)
	return nil, nil
}

// succeeded: status.plan holds the plan, PlanReady True Planned says what
// it changes, an Event says so, and Ready names the plan to approve.
func (p *plan) succeeded(s *step, _ outcome) {
	s.st.Plan = p.made
	s.dec.Message = awaitingMessage(p.made.FromRevision, p.made.Digest)
	if s.o.Approved != "" && s.o.Approved != p.made.Digest { // approved already (from chartkeeper diff's digest): upgraded next
		s.dec.Reason = api.ReasonApprovalStale
		s.dec.Message = fmt.Sprintf("the approved plan %s is not the current plan %s: nothing was upgraded; %s", s.o.Approved, p.made.Digest, howToApprove(p.made.Digest))
	}
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
	if s.o.ManualApproval && s.o.Approved != "" && s.o.Approved == s.o.Planned {
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
