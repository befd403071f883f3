package helm

// SecretScope says which Secrets the metadata cache given to
// ReadReleasesFrom holds.
type SecretScope int

const (
	// ManagedSecrets: only those with chartkeeper's managed label. A release
	// the cache does not show may have been made outside chartkeeper (the
	// helm CLI), so the API server is asked once (then believed absent for
	// absentTTL).
	ManagedSecrets SecretScope = iota
	// EveryReleaseSecret: every Secret labelled owner=helm, the Secrets of
	// Helm's driver and of the chunked driver, whoever made them. A release
	// the cache does not show does not exist (but for the cache's lag behind
	// a helm CLI install, shorter than absentTTL).
	EveryReleaseSecret
)
