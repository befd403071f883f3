package watches

// Release storage drivers a watch may choose (the storage field).
const (
	// StorageSecret stores each revision in one Secret with Helm's own
	// driver: what helm list and helm history read. A revision's record
	// must fit the 1 MiB a Secret holds.
	StorageSecret = "secret"
	// StorageChunked stores each revision in an index Secret and as many
	// chunk Secrets as its record needs (helm-operator-plugins' chunked
	// Secret driver): for releases whose record is over 1 MiB. The helm
	// CLI does not see these releases.
	StorageChunked = "chunked"
)

// Storages are the values of the storage field, the default first.
var Storages = []string{StorageSecret, StorageChunked}

// ReleaseStorage returns the watch's release storage driver (StorageSecret
// when unset).
func (w Watch) ReleaseStorage() string {
	if w.Storage == "" {
		return StorageSecret
	}
	return w.Storage
}

func validateStorage(s string, add func(field, format string, args ...any)) {
	switch s {
	case "", StorageSecret, StorageChunked:
	default:
		add("storage", "%q is not a release storage: use %q (default: one Secret per revision, what helm list reads) or %q (revisions over 1 MiB split over several Secrets)", s, StorageSecret, StorageChunked)
	}
}
