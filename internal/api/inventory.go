package api

// Inventory bounds (docs/status-history.md): status.inventory lists at
// most MaxInventoryEntries objects, not-ready ones first, and no more
// than fit in MaxInventoryBytes of JSON (each message cut to
// MaxObjectMessage bytes); its counts always cover every object.
const (
	MaxInventoryEntries = 50
	MaxInventoryBytes   = 16 << 10
	MaxObjectMessage    = 256
)

// ObjectState is the readiness of one released object (kstatus).
type ObjectState string

// The states of a released object, worst first: the order entries are
// listed in.
const (
	// ObjectMissing: the object is not in the cluster (deleted).
	ObjectMissing ObjectState = "Missing"
	// ObjectFailed: kstatus reports it Failed (a Job out of retries, say).
	ObjectFailed ObjectState = "Failed"
	// ObjectNotReady: not Current yet (in progress, unreadable status).
	ObjectNotReady ObjectState = "NotReady"
	// ObjectReady: Current; kinds with nothing to wait for (ConfigMap,
	// Secret, RBAC, ...) are ready once they exist.
	ObjectReady ObjectState = "Ready"
)

// ObjectStates lists the states, worst first.
func ObjectStates() []ObjectState {
	return []ObjectState{ObjectMissing, ObjectFailed, ObjectNotReady, ObjectReady}
}

// Inventory is what the release's current revision holds, as
// status.inventory records it: how many objects and how many are ready,
// and the objects themselves, the not-ready ones first, as far as the
// bounds allow (Omitted says how many are not listed).
type Inventory struct {
	// Revision is the release revision whose objects these are.
	Revision int `json:"revision"`
	// Total counts the revision's objects; Ready those that are ready,
	// NotReady the others (missing, failed or not ready yet).
	Total    int `json:"total"`
	Ready    int `json:"ready"`
	NotReady int `json:"notReady"`
	// Omitted counts the objects not listed in Entries (ready ones, unless
	// more than MaxInventoryEntries are not).
	Omitted int `json:"omitted,omitempty"`
	// Entries lists the objects, worst state first.
	Entries []InventoryEntry `json:"entries,omitempty"`
}

// InventoryEntry is one released object and its readiness.
type InventoryEntry struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Namespace is empty for cluster-scoped objects.
	Namespace string      `json:"namespace,omitempty"`
	Name      string      `json:"name"`
	State     ObjectState `json:"state"`
	// Message says why it is not ready (kstatus), at most
	// MaxObjectMessage bytes; empty when ready.
	Message string `json:"message,omitempty"`
}
