// Package scaffold packages a Helm chart as a new kind of a chartkeeper
// project (chartkeeper create-api): it copies the chart under charts/,
// adds or updates the kind's watches.yaml entry and, on request, writes a
// Go hook stub registered in internal/apps. CRDs, RBAC and the sample come
// after it from package manifests. Every step is idempotent: a second run
// with the same input changes nothing.
package scaffold
