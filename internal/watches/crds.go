package watches

// CRD policies a watch may choose for the CRDs its chart ships, in crds/
// or in templates (the crds.policy field). chartkeeper applies them
// itself, never Helm: they are no part of any release, so no uninstall,
// rollback or upgrade ever deletes one.
const (
	// CRDPolicySkip: chartkeeper never creates or changes a CRD (they are
	// installed some other way); it needs no apiextensions permissions.
	CRDPolicySkip = "skip"
	// CRDPolicyCreate (default, Helm's own behaviour for crds/): missing
	// CRDs are created, and waited for until Established; existing ones
	// are left as they are.
	CRDPolicyCreate = "create"
	// CRDPolicyCreateAndReplace: also apply the chart's fields to an
	// existing CRD that differs from the chart's (server-side apply: what
	// others set stays), after the safe-upgrade check (no stored or served
	// version removed, scope unchanged, no breaking schema change or new
	// validation rule in a version both hold, conversion kept); a breaking
	// CRD is refused.
	CRDPolicyCreateAndReplace = "create-and-replace"
)

// CRDPolicies are the values of crds.policy, the default first.
var CRDPolicies = []string{CRDPolicyCreate, CRDPolicySkip, CRDPolicyCreateAndReplace}

// CRDs is a watch's crds field.
type CRDs struct {
	// Policy is CRDPolicySkip, CRDPolicyCreate (default) or
	// CRDPolicyCreateAndReplace.
	Policy string `json:"policy,omitempty"`
}

// CRDPolicy returns the watch's CRD policy (CRDPolicyCreate when unset).
func (w Watch) CRDPolicy() string {
	if w.CRDs == nil || w.CRDs.Policy == "" {
		return CRDPolicyCreate
	}
	return w.CRDs.Policy
}

func validateCRDs(c *CRDs, add func(field, format string, args ...any)) {
	if c == nil {
		return
	}
	switch c.Policy {
	case "", CRDPolicySkip, CRDPolicyCreate, CRDPolicyCreateAndReplace:
	default:
		add("crds.policy", "%q is not a CRD policy: use %q (default: create missing CRDs, leave existing ones), %q (never touch CRDs) or %q (also replace a changed CRD when it breaks no custom resource)",
			c.Policy, CRDPolicyCreate, CRDPolicySkip, CRDPolicyCreateAndReplace)
	}
}
