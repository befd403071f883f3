// Package e2e holds end-to-end tests: they build the chartkeeper binary and
// the make targets users run, start them as separate processes against the
// real local cluster, and check what a user would see.
package e2e
