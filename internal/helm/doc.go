// Package helm is the operator's door to the Helm SDK, and the only package
// that imports Helm's action, storage, kube and postrender packages: it
// performs one Helm action (install, upgrade, rollback, uninstall, unlock,
// test, take-over, plan) or reads a release when asked, lists revisions
// from their Secrets' labels (Revisions, StoredRevisions, ReleaseOf), and takes no
// decisions. Which action to run, when, and what a failure means is the
// release package's business.
//
// It is not a thin wrapper: around Helm's actions it keeps what the engine
// relies on. The Guard of an action admits or refuses each object (scope,
// admit.go), redacts secret values from Helm's logs, records what was
// written and impersonates the release's account; the release storage is
// cached (secretcache.go), signed against forgery (signing.go) and stamped
// with labels read without decoding (stamps.go); and several of Helm's
// kube client steps are replaced by ones that cost fewer API requests
// (createfirst.go, update.go, deletetogether.go, purge.go, onewrite.go)
// or repair a refused patch (repair.go).
//
// Releases are stored with Helm's Secret driver in the release namespace, so
// the helm CLI (helm list -A, helm history) sees them; a watch with storage
// chunked stores them in helm-operator-plugins' chunked Secret format
// instead (WithStorage, storage.go; written by chunked.go so that a failed
// write leaves every revision readable), which the helm CLI does not read. All clients share one
// memory-cached discovery client and REST mapper (which remembers the mappings it found,
// mapper.go), and the cluster's
// capabilities are read once and refreshed at most every CapabilitiesTTL,
// so an action costs only the API requests it really makes.
package helm
