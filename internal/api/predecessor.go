package api

// The status shape of chartkeeper's predecessors, helm-operator-plugins
// (v0.9.1) and operator-sdk's Helm operator: the condition types they
// write and status.deployedRelease. chartkeeper removes them from a
// resource it reconciles (a user switched to it), or maintains Deployed,
// ReleaseFailed, Irreconcilable, Initialized and deployedRelease when the
// watch asks for that shape (statusCompat: HelmOperator; docs/conditions.md,
// Predecessors' status).
const (
	// ConditionDeployed: the release is deployed from the desired chart
	// and values (True: InstallSuccessful, UpgradeSuccessful).
	ConditionDeployed = "Deployed"
	// ConditionReleaseFailed: the last install, upgrade or uninstall
	// failed (True: InstallError, UpgradeError, UninstallError).
	ConditionReleaseFailed = "ReleaseFailed"
	// ConditionIrreconcilable: reconciling the resource failed or is stuck
	// (True: ReconcileError).
	ConditionIrreconcilable = "Irreconcilable"
	// ConditionInitialized: an operator reconciles the resource.
	ConditionInitialized = "Initialized"
	// ConditionPaused is helm-operator-plugins' pause annotation's;
	// chartkeeper never keeps it (its suspension is Ready False Suspended).
	ConditionPaused = "Paused"
)

// PredecessorConditions is the closed set of the predecessors' condition
// types: only these are removed (or, with statusCompat, rewritten);
// conditions of other types, another controller's, are never touched.
func PredecessorConditions() []string {
	return []string{ConditionDeployed, ConditionReleaseFailed, ConditionIrreconcilable, ConditionInitialized, ConditionPaused}
}

// IsPredecessorCondition reports whether typ is one of PredecessorConditions.
func IsPredecessorCondition(typ string) bool {
	for _, p := range PredecessorConditions() {
		if p == typ {
			return true
		}
	}
	return false
}

// The predecessors' reasons, written with statusCompat: HelmOperator.
const (
	// ReasonInstallSuccessful: Deployed True at revision 1.
	ReasonInstallSuccessful Reason = "InstallSuccessful"
	// ReasonUpgradeSuccessful: Deployed True at a later revision.
	ReasonUpgradeSuccessful Reason = "UpgradeSuccessful"
	// ReasonUninstallSuccessful: Deployed False, the release uninstalled.
	ReasonUninstallSuccessful Reason = "UninstallSuccessful"
	// ReasonInstallError, ReasonUpgradeError, ReasonUninstallError:
	// ReleaseFailed True, naming the action that failed.
	ReasonInstallError   Reason = "InstallError"
	ReasonUpgradeError   Reason = "UpgradeError"
	ReasonUninstallError Reason = "UninstallError"
	// ReasonReconcileError: Irreconcilable True.
	ReasonReconcileError Reason = "ReconcileError"
)

// DeployedRelease is the predecessors' status.deployedRelease: the
// release's name and manifest (statusCompat: HelmOperator only).
type DeployedRelease struct {
	Name     string `json:"name,omitempty"`
	Manifest string `json:"manifest,omitempty"`
	// Revision is the revision Manifest is of (chartkeeper's addition:
	// the manifest is read again only when it changes).
	Revision int `json:"revision,omitempty"`
}
