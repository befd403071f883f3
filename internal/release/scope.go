package release

import (
	"fmt"

	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// ScopeError: a release would put an object where the watch's scope does
// not allow (another namespace, or cluster scope). It is terminal for the
// spec that renders it, like a *ChartError: nothing was stored or applied.
type ScopeError struct {
	Object           ownership.Placement
	ReleaseNamespace string
}

func (e *ScopeError) Error() string {
	if e.Object.ClusterScoped {
		return fmt.Sprintf("%s: cluster-scoped objects are not allowed for this kind (watches.yaml scope.clusterScoped)", e.Object)
	}
	return fmt.Sprintf("%s: objects outside the release namespace %s are not allowed for this kind (watches.yaml scope.namespaces)", e.Object, e.ReleaseNamespace)
}

// admitScope returns the check every object a release creates or updates
// passes: in the release namespace, or where the watch's scope allows.
func admitScope(scope *watches.Scope, releaseNamespace string) func(ownership.Placement) error {
	return func(p ownership.Placement) error {
		switch {
		case p.ClusterScoped && !scope.AllowsClusterScoped(),
			!p.ClusterScoped && !scope.AllowsNamespace(p.Namespace, releaseNamespace):
			return &ScopeError{Object: p, ReleaseNamespace: releaseNamespace}
		}
		return nil
	}
}
