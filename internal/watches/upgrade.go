package watches

import "fmt"

// Approval says who lets an upgrade happen.
type Approval string

// The approvals.
const (
	// ApprovalAuto: the operator upgrades as soon as the desired chart or
	// values change (the default).
	ApprovalAuto Approval = "auto"
	// ApprovalManual: the operator writes the upgrade's plan to
	// status.plan and upgrades only when a person approves that plan
	// (annotation chartkeeper.dev/approve: <digest>). Installs, rollbacks
	// and drift corrections are not held.
	ApprovalManual Approval = "manual"
)

// ParseApproval reads an approval ("auto" or "manual").
func ParseApproval(s string) (Approval, error) {
	switch a := Approval(s); a {
	case ApprovalAuto, ApprovalManual:
		return a, nil
	}
	return "", fmt.Errorf("%q is not an approval: use %q or %q", s, ApprovalAuto, ApprovalManual)
}

// UpgradeConfig is a watch's upgrade field.
type UpgradeConfig struct {
	// Approval: "auto" (default) or "manual" (see ApprovalManual).
	Approval string `json:"approval,omitempty"`
	// AllowResourceAutoApproval lets a resource's chartkeeper.dev/approval:
	// "auto" lift the watch's manual approval. Off by default: a resource
	// may make approval manual, never auto; its annotation is refused.
	AllowResourceAutoApproval bool `json:"allowResourceAutoApproval,omitempty"`
}

// resolve returns the approval, reporting a bad one, and whether a
// resource may lift a manual one.
func (u *UpgradeConfig) resolve(add func(field, format string, args ...any)) (Approval, bool) {
	if u == nil {
		return ApprovalAuto, false
	}
	if u.Approval == "" {
		return ApprovalAuto, u.AllowResourceAutoApproval
	}
	a, err := ParseApproval(u.Approval)
	if err != nil {
		add("upgrade.approval", "%v", err)
		return ApprovalAuto, u.AllowResourceAutoApproval
	}
	return a, u.AllowResourceAutoApproval
}
