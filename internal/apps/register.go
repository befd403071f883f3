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
	// EtcdLoopback addresses EtcdCluster members on 127.0.0.1
	// (etcdcluster.Loopback) instead of their Pod DNS names: for the local
	// cluster, where `devcluster etcd-pods` runs them.
	EtcdLoopback bool
}

// registrations add the hooks of kinds packaged with `chartkeeper
// create-api --hook`, one per kind, each from its own file's init.
var registrations []func(r *hooks.Registry, watched func(schema.GroupKind) bool, o Options) error

// Register adds the bundled kinds' Go hooks, one line per hook in the
// order they run, e.g.
//
//	r.Add(gk, hooks.Hook{Name: "credentials", Impl: &hooks.Credentials{}})
//
// A kind the watches do not name is skipped.
func Register(r *hooks.Registry, watched func(schema.GroupKind) bool, o Options) error {
	if watched(EtcdCluster) {
		h := &etcdcluster.Hook{RestoreImage: o.EtcdRestoreImage}
		if o.EtcdLoopback {
			h.Address = func(name, ns string, _ bool) etcdcluster.Addressing {
				return etcdcluster.Loopback{Name: name, Namespace: ns}
			}
		}
		if err := r.Add(EtcdCluster, hooks.Hook{Name: "etcd", Impl: h}); err != nil {
			return err
		}
	}
	for _, add := range registrations {
		if err := add(r, watched, o); err != nil {
			return err
		}
	}
	return nil
}
