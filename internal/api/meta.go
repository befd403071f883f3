package api

// Finalizer keeps a custom resource until its release is uninstalled.
const Finalizer = "chartkeeper.dev/uninstall"

// Labels and annotations chartkeeper puts on what it releases.
const (
	// LabelManaged marks every released object and every release Secret;
	// chartkeeper's dependent watches select on it.
	LabelManaged = "chartkeeper.dev/managed"
	// LabelDigest on a release Secret is the digest of the chart and values
	// the revision was made from.
	LabelDigest = "chartkeeper.dev/digest"
	// AnnotationOwner on a released object names its custom resource as
	// "<group>/<Kind>/<namespace>/<name>" (namespace empty for cluster scope).
	AnnotationOwner = "chartkeeper.dev/owner"
	// FieldManager is the field manager of every write chartkeeper makes.
	FieldManager = "chartkeeper"
	// AnnotationSkipUninstallHooks: "true" on a custom resource being
	// deleted makes the next deletion step skip the kind's BeforeUninstall
	// Go hooks and uninstall (a hook that keeps failing cannot wedge the
	// deletion).
	AnnotationSkipUninstallHooks = "chartkeeper.dev/skip-uninstall-hooks"
)
