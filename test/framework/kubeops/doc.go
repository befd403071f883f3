// Package kubeops holds the few cluster chores the benchmark and the chaos
// harness share: connect with a given rate limit, install a CRD and wait
// until it is served, create and delete namespaces, and poll for a
// condition with a deadline.
package kubeops
