package api

// Finalizer keeps a custom resource until its release is uninstalled.
const Finalizer = "chartkeeper.dev/uninstall"

// The finalizers the predecessors put on their custom resources, honoured
// for a release chartkeeper has taken over (docs/release-engine.md,
// Ownership): deleting the resource uninstalls the release once, then
// removes them with Finalizer. No other finalizer is ever touched.
const (
	// FinalizerHelmOperatorPlugins is helm-operator-plugins' finalizer.
	FinalizerHelmOperatorPlugins = "uninstall-helm-release"
	// FinalizerOperatorSDK is operator-sdk's Helm operator's finalizer.
	FinalizerOperatorSDK = "helm.sdk.operatorframework.io/uninstall-release"
)

// PredecessorFinalizers lists the predecessors' finalizers.
func PredecessorFinalizers() []string {
	return []string{FinalizerHelmOperatorPlugins, FinalizerOperatorSDK}
}

// Prefix begins the name of every label and annotation chartkeeper reads
// or writes.
const Prefix = "chartkeeper.dev/"

// Labels and annotations chartkeeper puts on what it releases.
const (
	// LabelManaged marks every released object and every release Secret;
	// chartkeeper's dependent watches select on it.
	LabelManaged = "chartkeeper.dev/managed"
	// LabelDigest on a release Secret is the digest of the chart and values
	// the revision was made from.
	LabelDigest = "chartkeeper.dev/digest"
	// LabelOwnerKind on a release Secret names the kind of the custom
	// resource it belongs to, as "<Kind>.<group>" (left off when that is not
	// a valid label value): a release whose kind is no longer in
	// watches.yaml is found by it at start.
	LabelOwnerKind = "chartkeeper.dev/owner-kind"
	// AnnotationOwner on a released object names its custom resource as
	// "<group>/<Kind>/<namespace>/<name>" (namespace empty for cluster scope).
	AnnotationOwner = "chartkeeper.dev/owner"
	// FieldManager is the field manager of every write chartkeeper makes.
	FieldManager = "chartkeeper"
	// AnnotationDrift on a custom resource overrides its watch's drift
	// mode: correct, warn or disabled.
	AnnotationDrift = "chartkeeper.dev/drift"
	// AnnotationSkipUninstallHooks: "true" on a custom resource being
	// deleted makes the next deletion step skip the kind's BeforeUninstall
	// Go hooks and uninstall (a hook that keeps failing cannot wedge the
	// deletion).
	AnnotationSkipUninstallHooks = "chartkeeper.dev/skip-uninstall-hooks"
	// LabelOwnerUID on a release Secret is the UID of the custom resource
	// whose release it is: another resource that would use the same
	// release is refused (docs/release-engine.md, Ownership).
	LabelOwnerUID = "chartkeeper.dev/owner-uid"
	// LabelCRDChart on a CRD chartkeeper applied from a chart (crds/ or
	// templates) names that chart; AnnotationCRDChartVersion its version.
	// Such a CRD is no part of any release and is never deleted.
	// AnnotationCRDDigest is the digest of the chart's definition it was
	// last written from: create-and-replace does not write it again while
	// the chart's is the same.
	LabelCRDChart             = "chartkeeper.dev/crd-chart"
	AnnotationCRDChartVersion = "chartkeeper.dev/crd-chart-version"
	AnnotationCRDDigest       = "chartkeeper.dev/crd-digest"
)

// Annotations a person puts on a custom resource to steer it without
// editing its spec (docs/annotations.md).
const (
	// AnnotationReconcileRequestedAt: a value other than
	// status.lastHandledReconcileAt asks for a reconcile now, with a fresh
	// retry budget (as Flux's reconcile.fluxcd.io/requestedAt).
	AnnotationReconcileRequestedAt = "chartkeeper.dev/reconcile-requested-at"
	// AnnotationSuspend: "true" stops every action but the uninstall of a
	// deleted resource; "false" or absent resumes.
	AnnotationSuspend = "chartkeeper.dev/suspend"
	// AnnotationServiceAccount names the ServiceAccount of the release
	// namespace the release runs as, instead of its watch's
	// impersonate.serviceAccount; only where the watch allows it
	// (impersonate.allowOverride).
	AnnotationServiceAccount = "chartkeeper.dev/service-account"
	// HelmOperatorDomain prefixes helm-operator-plugins' (and operator-sdk's
	// Helm operator's) per-resource annotations.
	HelmOperatorDomain = "helm.sdk.operatorframework.io/"
)
