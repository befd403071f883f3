// Package etcdpods stands in for the kubelet for EtcdCluster Pods on the
// local development cluster. kwok marks Pods Running without starting
// containers; for each scheduled Pod of charts/etcd-cluster, the Runner
// starts a real etcd process (bin/etcd) on 127.0.0.1 as that Pod's member,
// so chartkeeper's etcd hook (with loopback addressing) acts on real
// members: scale, upgrade, lost members, backup and restore.
//
// It mirrors what a kubelet does with those Pods: the process starts with
// the member ConfigMap as it is at start time, its data lives on the Pod's
// PersistentVolumeClaim (a directory per PVC UID: a new claim is an empty
// volume), a recreated Pod (new UID, e.g. a rolling update) restarts the
// process, a deleted Pod stops it, a crashed process is restarted with
// backoff, and the "restore" init container runs (bin/chartkeeper
// etcd-restore) before the member starts. Members serve plain HTTP.
package etcdpods
