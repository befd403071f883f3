package api

// Manual approval of upgrades (docs/plan-approve.md): a watch's
// upgrade.approval, or a resource's AnnotationApproval, set to manual
// makes a change of the desired chart or values write a plan instead of
// upgrading; AnnotationApprove set to the plan's digest applies it.
const (
	// ConditionPlanReady: True while status.plan describes the upgrade the
	// desired chart and values would make, awaiting approval.
	ConditionPlanReady = "PlanReady"

	// AnnotationApproval on a custom resource overrides its watch's
	// upgrade.approval: "manual" or "auto".
	AnnotationApproval = "chartkeeper.dev/approval"
	// AnnotationApprove names the digest of the plan (status.plan.digest)
	// a person approves: that upgrade is made, and no other.
	AnnotationApprove = "chartkeeper.dev/approve"
)

// PlanStatus is the upgrade a resource awaits approval for: what the API
// server answered to dry runs of it against the live objects. It names
// objects and fields, never values.
type PlanStatus struct {
	// Digest identifies the plan: what the upgrade is made from and for
	// (the desired chart and values, the revision they would upgrade, the
	// resource's UID, the release, the account, the upgrade annotations),
	// then the planned changes too (internal/release/plan.go). Approve it
	// with AnnotationApprove.
	Digest string `json:"digest"`
	// FromRevision is the revision the upgrade starts from.
	FromRevision int `json:"fromRevision"`
	// Chart is the chart name and version the upgrade would release.
	Chart string `json:"chart,omitempty"`
	// Create, Update and Delete are the objects the upgrade would create,
	// change (with the changed fields) and delete; Keep those it would
	// leave in place though the chart drops them (helm.sh/resource-policy:
	// keep).
	Create []PlannedObject `json:"create,omitempty"`
	Update []PlannedObject `json:"update,omitempty"`
	Delete []PlannedObject `json:"delete,omitempty"`
	Keep   []PlannedObject `json:"keep,omitempty"`
	// Omitted counts the objects or fields left out to keep the status
	// small (a big release); chartkeeper diff prints them all.
	Omitted int `json:"omitted,omitempty"`
}

// PlannedObject is one object of a plan.
type PlannedObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Fields are the changed fields of an update, as JSON pointers.
	Fields []string `json:"fields,omitempty"`
}

func (p *PlanStatus) deepCopy() *PlanStatus {
	out := *p
	for _, l := range []*[]PlannedObject{&out.Create, &out.Update, &out.Delete, &out.Keep} {
		objs := make([]PlannedObject, len(*l))
		for i, o := range *l {
			o.Fields = append([]string(nil), o.Fields...)
			objs[i] = o
		}
		if *l != nil {
			*l = objs
		}
	}
	return &out
}
