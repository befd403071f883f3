package release

import (
	"context"

	helmrelease "helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/helm"
)

// Helm is all the engine asks of Helm: run one action, read a revision,
// list revisions from their storage metadata. It takes no decisions.
// internal/helm's *Client implements it over the Helm 3 SDK; tests use
// fakes; a Helm 4 backend would implement it too (docs/helm4.md).
type Helm interface {
	// Install, Upgrade, Rollback and Uninstall are bounded in time by the
	// request's (Guard's) Timeout, chart hooks included: an action that
	// runs out of it fails with a *helm.TimeoutError naming what it waited
	// for.
	//
	// Install installs a new release; a failed install is stored as a
	// failed revision and returned as an error.
	Install(ctx context.Context, r helm.Request) (*helmrelease.Release, error)
	// Upgrade upgrades the release to the request's chart and values.
	Upgrade(ctx context.Context, r helm.Request) (*helmrelease.Release, error)
	// Rollback rolls back to toRevision as a new revision, admitting every
	// object it re-applies with g.
	Rollback(ctx context.Context, name, namespace string, toRevision, maxHistory int, g helm.Guard) error
	// Uninstall removes the release's objects and history, bounded by
	// g.Timeout, its hooks skipped with g.DisableHooks; a release that does
	// not exist is no error.
	Uninstall(ctx context.Context, name, namespace, description string, g helm.Guard) error
	// Test runs the chart's tests (its helm.sh/hook: test hooks) against
	// the latest revision, each bounded by g.Timeout, reads why a test Pod
	// that did not succeed failed, and deletes the test hooks' objects; the
	// error says which test failed, or why they could not run.
	Test(ctx context.Context, name, namespace string, g helm.Guard) (helm.TestRun, error)
	// Unlock marks a pending latest revision failed and returns it
	// (helm.ErrNotLocked when it is not pending).
	Unlock(ctx context.Context, name, namespace string) (*helmrelease.Release, error)
	// TakeOver rewrites rel, a stored revision as Get returned it, in place
	// with labels added, signed as the operator's own (a predecessor's
	// release taken over: takeover.go); it makes no revision and applies
	// nothing.
	TakeOver(ctx context.Context, rel *helmrelease.Release, labels map[string]string) error
	// Get returns a revision (0: the latest).
	Get(ctx context.Context, name, namespace string, version int) (*helmrelease.Release, error)
	// Revisions lists the stored revisions, oldest first, from the
	// metadata r reads: nothing is decoded.
	Revisions(ctx context.Context, r client.Reader, name, namespace string) ([]helm.Revision, error)
	// StoredRevisions lists the stored revisions, oldest first, as the
	// release storage holds them now (its own writes included, which a
	// cache may not show yet; the API server when it knows of none).
	StoredRevisions(ctx context.Context, name, namespace string) ([]helm.Revision, error)
	// Plan tells what Upgrade(r) would change, from dry runs against the
	// live objects; it stores and applies nothing.
	Plan(ctx context.Context, r helm.Request) (*helm.Plan, error)
	// Mapper is the REST mapper Helm uses (nil offline).
	Mapper() meta.RESTMapper
}

var _ Helm = (*helm.Client)(nil)
