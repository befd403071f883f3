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
}

// resolve returns the approval, reporting a bad one.
func (u *UpgradeConfig) resolve(add func(field, format string, args ...any)) Approval {
	if u == nil || u.Approval == "" {
		return ApprovalAuto
	}
	a, err := ParseApproval(u.Approval)
	if err != nil {
		add("upgrade.approval", "%v", err)
		return ApprovalAuto
	}
	return a
}
