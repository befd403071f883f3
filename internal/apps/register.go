package apps

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/etcdcluster"
	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

// EtcdCluster is the bundled etcd kind.
var EtcdCluster = schema.GroupKind{Group: "apps.chartkeeper.dev", Kind: "EtcdCluster"}

// Options configure the bundled hooks.
type Options struct {
	// EtcdRestoreImage is the image of a restored EtcdCluster's restore
	// init container (default etcdcluster.DefaultRestoreImage).
	EtcdRestoreImage string
}

// Register adds the bundled kinds' Go hooks, one line per hook in the
// order they run, e.g.
//
//	r.Add(gk, hooks.Hook{Name: "credentials", Impl: &hooks.Credentials{}})
//
// A kind the watches do not name is skipped.
func Register(r *hooks.Registry, watched func(schema.GroupKind) bool, o Options) error {
	if watched(EtcdCluster) {
		if err := r.Add(EtcdCluster, hooks.Hook{Name: "etcd", Impl: &etcdcluster.Hook{RestoreImage: o.EtcdRestoreImage}}); err != nil {
			return err
		}
	}
	return nil
}
