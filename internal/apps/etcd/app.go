// Package etcd is the bundled EtcdCluster app: it registers the etcd hook
// (package etcdcluster) for the EtcdCluster kind, the flags that configure
// it, and the etcd-restore command restored clusters' Pods run.
package etcd

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/apps"
	"github.com/chartkeeper/chartkeeper/internal/etcdcluster"
	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

// EtcdCluster is the bundled etcd kind.
var EtcdCluster = schema.GroupKind{Group: "apps.chartkeeper.dev", Kind: "EtcdCluster"}

func init() {
	apps.Register(apps.App{
		Name:  "etcd",
		Kinds: []schema.GroupKind{EtcdCluster},
		Flags: opts.bind,
		Hooks: func(schema.GroupKind) []hooks.Hook { return []hooks.Hook{{Name: "etcd", Impl: opts.hook()}} },
		Commands: []apps.Command{{Name: "etcd-restore", Usage: "seed an EtcdCluster member from a backup (runs in its Pod)",
			Run: restoreCommand}},
	})
}

// options are the app's flags; their zero value is the default.
type options struct {
	// restoreImage is the image of a restored EtcdCluster's restore init
	// container ("": etcdcluster.DefaultRestoreImage).
	restoreImage string
	// addressing says how the hook reaches members.
	addressing addressing
}

// opts holds the flags of the command being run.
var opts options

func (o *options) bind(fs *flag.FlagSet) {
	o.addressing = podDNS
	fs.Var(&o.addressing, "etcd-member-addressing", `how the etcd hook reaches EtcdCluster members: "pod-dns" (in a cluster) or "loopback" (the local cluster with devcluster etcd-pods)`)
	fs.StringVar(&o.restoreImage, "etcd-restore-image", os.Getenv("ETCD_RESTORE_IMAGE"), "image that runs `chartkeeper etcd-restore` in restored EtcdClusters (env ETCD_RESTORE_IMAGE; default: the operator's release image)")
}

// hook is the etcd hook the flags describe.
func (o *options) hook() *etcdcluster.Hook {
	h := &etcdcluster.Hook{RestoreImage: o.restoreImage}
	if o.addressing == loopback {
		h.Address = func(name, ns string, _ bool) etcdcluster.Addressing {
			return etcdcluster.Loopback{Name: name, Namespace: ns}
		}
	}
	return h
}

// addressing is the value of --etcd-member-addressing.
type addressing string

// The ways the hook reaches members: by their Pod DNS names, or on
// 127.0.0.1 (etcdcluster.Loopback) for the local cluster, where
// `devcluster etcd-pods` runs them.
const (
	podDNS   addressing = "pod-dns"
	loopback addressing = "loopback"
)

func (a *addressing) String() string { return string(*a) }

func (a *addressing) Set(s string) error {
	switch v := addressing(s); v {
	case podDNS, loopback:
		*a = v
		return nil
	}
	return fmt.Errorf("must be %s or %s", podDNS, loopback)
}
