// Package devcluster runs a real, local Kubernetes control plane without
// containers: etcd, kube-apiserver, kube-controller-manager, kube-scheduler
// and kwok (which simulates nodes, so Pods become Running and Ready), all as
// plain processes listening on 127.0.0.1 only.
//
// Everything the cluster owns lives in one state directory: the PKI it
// generates with crypto/x509, kubeconfigs, data, logs, and state.json, which
// records the ports and the process IDs (with their start times, so a reused
// PID is never mistaken for ours). Up is idempotent: on a running cluster it
// checks health and restarts only components that died. Down stops exactly
// the processes recorded in state.json and nothing else.
//
// The binaries come from bin/, built by `make tools` from the pinned tools
// module under hack/tools.
package devcluster
