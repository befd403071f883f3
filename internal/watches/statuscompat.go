package watches

// StatusCompat names a status shape a watch keeps on its resources besides
// chartkeeper's own (the statusCompat field), for scripts written against
// a predecessor operator.
type StatusCompat string

const (
	// StatusCompatNone (the default, also written "None"): chartkeeper's
	// conditions only; the predecessors' conditions (Deployed,
	// ReleaseFailed, Irreconcilable, Initialized, Paused) and
	// status.deployedRelease are removed at the first status write.
	StatusCompatNone StatusCompat = "None"
	// StatusCompatHelmOperator: chartkeeper also maintains the conditions
	// Deployed, ReleaseFailed, Irreconcilable and Initialized and
	// status.deployedRelease {name, manifest}, as helm-operator-plugins
	// and operator-sdk's Helm operator write them (kubectl wait
	// --for=condition=Deployed keeps working).
	StatusCompatHelmOperator StatusCompat = "HelmOperator"
)

// HelmOperatorStatus reports whether the watch keeps the Helm operators'
// status shape.
func (w Watch) HelmOperatorStatus() bool { return w.StatusCompat == StatusCompatHelmOperator }

func validateStatusCompat(c StatusCompat, add func(field, format string, args ...any)) {
	switch c {
	case "", StatusCompatNone, StatusCompatHelmOperator:
	default:
		add("statusCompat", "%q is not a status shape: use %q (also maintain the conditions Deployed, ReleaseFailed, Irreconcilable, Initialized and status.deployedRelease, as helm-operator-plugins and operator-sdk's Helm operator write them) or %q (the default: chartkeeper's conditions only; the predecessors' are removed)",
			c, StatusCompatHelmOperator, StatusCompatNone)
	}
}
