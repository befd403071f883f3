// Package scaffold packages a Helm chart as a new kind of a chartkeeper
// project (chartkeeper create-api): it copies the chart under charts/,
// adds or updates the kind's watches.yaml entry and, on request, writes the
// kind's app: a folder internal/apps/<kind> with a Go hook stub that
// registers itself, and the regenerated internal/apps/all that imports
// every app. CRDs, RBAC and the sample come after it from package
// manifests. Every step is idempotent: a second run
// with the same input changes nothing.
package scaffold
