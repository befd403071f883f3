// Package manifests generates the Kubernetes manifests that follow from
// watches.yaml: one CustomResourceDefinition per watched kind (with the
// status schema and printer columns of the release engine) and the
// ClusterRole the operator needs. `make manifests` writes them under
// config/; CI regenerates them and fails when the committed ones differ.
package manifests
