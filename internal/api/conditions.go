package api

// Condition types. Ready and Released have positive polarity (True is
// good); Reconciling and Stalled follow the kstatus convention (present and
// True while the state holds, removed otherwise); Remediated is True after a
// failed release was rolled back or uninstalled.
const (
	ConditionReady       = "Ready"
	ConditionReleased    = "Released"
	ConditionReconciling = "Reconciling"
	ConditionStalled     = "Stalled"
	ConditionRemediated  = "Remediated"
)

// Condition reasons.
const (
	ReasonInstallSucceeded   = "InstallSucceeded"
	ReasonInstallFailed      = "InstallFailed"
	ReasonUpgradeSucceeded   = "UpgradeSucceeded"
	ReasonUpgradeFailed      = "UpgradeFailed"
	ReasonRollbackSucceeded  = "RollbackSucceeded"
	ReasonRollbackFailed     = "RollbackFailed"
	ReasonUninstallSucceeded = "UninstallSucceeded"
	ReasonUninstallFailed    = "UninstallFailed"
	ReasonUnlocked           = "Unlocked"
	ReasonDriftCorrected     = "DriftCorrected"
	ReasonDriftFailed        = "DriftCorrectionFailed"
	ReasonPruned             = "Pruned"
	ReasonInSync             = "InSync"
	ReasonProgressing        = "Progressing"
	ReasonNotReady           = "NotReady"
	ReasonReadinessTimeout   = "ReadinessTimeout"
	ReasonRetriesExhausted   = "RetriesExhausted"
	ReasonInvalidValues      = "InvalidValues"
	ReasonChartError         = "ChartError"
	ReasonBackoff            = "Backoff"
	ReasonPending            = "Pending"
	ReasonNotReleased        = "NotReleased"
	ReasonDeleting           = "Deleting"
	ReasonSucceeded          = "Succeeded"
	ReasonTransientError     = "TransientError"
	ReasonHookFailed         = "HookFailed"
)
