// Package readiness decides whether released objects are ready, with
// kstatus (sigs.k8s.io/cli-utils/pkg/kstatus): the same rules kubectl,
// Flux and Helm 4 use, covering Deployments, StatefulSets, DaemonSets,
// Jobs, Pods, PVCs, Services, PDBs, CRDs and any resource that follows the
// Ready-condition and observedGeneration conventions.
package readiness
