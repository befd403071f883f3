package watches

// Lookup says what a chart's lookup function may read while it renders
// (the lookup field). A chart that passes values through tpl lets whoever
// writes a resource's values call lookup, with the operator's credentials
// (or the impersonated account's).
type Lookup string

const (
	// LookupReleaseNamespace (the default): lookup reads namespaced
	// objects of the release namespace only; anything else (another
	// namespace, all namespaces, a cluster-scoped kind) is not found, an
	// empty result, as under helm template.
	LookupReleaseNamespace Lookup = "ReleaseNamespace"
	// LookupCluster: lookup reads whatever the operator (or the
	// impersonated account) may read, anywhere: for single-tenant
	// clusters, where whoever writes a resource may read all that.
	LookupCluster Lookup = "Cluster"
)

// LookupScope returns the watch's lookup (LookupReleaseNamespace when
// unset).
func (w Watch) LookupScope() Lookup {
	if w.Lookup == "" {
		return LookupReleaseNamespace
	}
	return w.Lookup
}

func validateLookup(l Lookup, add func(field, format string, args ...any)) {
	switch l {
	case "", LookupReleaseNamespace, LookupCluster:
	default:
		add("lookup", "%q is not a lookup scope: use %q (default: a chart's lookup reads only the release namespace) or %q (it reads whatever the operator, or the impersonated account, may read: single-tenant clusters only)", l, LookupReleaseNamespace, LookupCluster)
	}
}
