// Package etcdcluster holds the day-2 knowledge of the bundled EtcdCluster
// kind, run as a chartkeeper Go hook beside charts/etcd-cluster: membership
// changes one member at a time (added to etcd before its Pod starts, removed
// before its Pod goes), partitioned upgrades gated on cluster health,
// replacement of members whose volume was lost, snapshots through the etcd
// maintenance API to an S3-compatible store, restore of a new cluster from a
// snapshot, and a status that says what etcd itself reports.
//
// The decisions are a pure function (Decide) of what was observed; the etcd
// cluster is reached through the Client interface, so tests drive the same
// code against real etcd processes on 127.0.0.1 (package etcdtest).
package etcdcluster
