// Package release is chartkeeper's release state machine. Each reconcile of
// a custom resource is one step:
//
//  1. observe: the stored release (from the label-scoped metadata cache of
//     release Secrets: revision, status and digest, no decoding), the desired
//     digest of chart + values, the released objects (drift, readiness) and
//     the remediation bookkeeping kept in the resource's status;
//  2. classify (Decide, a pure function): a named State and at most one
//     Action;
//  3. act: run that one action (Install, Upgrade, Rollback, Uninstall,
//     Unlock, CorrectDrift), each a small type over the helm package.
//
// The steady state (InSync) renders nothing and calls neither Helm nor the
// API server: change detection is by digest.
package release
