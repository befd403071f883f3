// Package testenv gives integration tests a real Kubernetes control plane.
//
// Cluster returns the shared local cluster of the test binary: when
// CHARTKEEPER_TEST_KUBECONFIG names a kubeconfig (make test sets it after
// starting one cluster for the whole run) tests attach to that cluster;
// otherwise the first call starts a private cluster from bin/ (make tools)
// in a temporary directory, and Main stops and deletes it when the tests
// end. Tests that need only an API server use APIServer, which runs
// controller-runtime's envtest with KUBEBUILDER_ASSETS pointing at bin/.
//
// A package that uses Cluster must call Main from its TestMain so that
// whatever it started is stopped.
package testenv
