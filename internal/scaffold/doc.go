// Package scaffold packages a Helm chart as a new kind of a chartkeeper
// project (chartkeeper create-api): it copies the chart under charts/,
// adds or updates the kind's watches.yaml entry and, on request, writes the
// kind's app: a folder internal/apps/<kind> with a Go hook stub that
// registers itself, and the regenerated internal/apps/all that imports
// every app. CRDs, RBAC and the sample come after it from package
// manifests; then Result.Decide checks the sample against the CRD and
// makes create-api's decisions for the kind's watches.yaml entry from the
// chart rendered with its defaults and samples: the scope it needs
// (scope.go), chunked storage for a large release record (storage.go) and
// the CRD policy when it ships CRDs (crds.go), each kept when the entry
// has the field already. Every step is idempotent: a second run
// with the same input changes nothing.
package scaffold
