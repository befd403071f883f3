// Package release is chartkeeper's release state machine. Each reconcile of
// a custom resource is one step:
//
//  1. observe: the stored release (from the label-scoped metadata cache of
//     release Secrets: revision, status and digest, no decoding), the desired
//     digest of chart + values (valuesFrom, spec, overrides), the released
//     objects (drift, readiness) and
//     the remediation bookkeeping kept in the resource's status;
//  2. classify (Decide, a pure function): a named State and at most one
//     Action;
//  3. act: run that one action (Install, Upgrade, Rollback, Uninstall,
//     Unlock, CorrectDrift, Prune, Test), each a small type in its own file that
//     also records its outcome (Events, failure count, status.release, the
//     Released, Remediated and Tested conditions);
//  4. summarize: setReadiness, the one writer of Ready, Reconciling and
//     Stalled, and the requeue policy (Result.Requeue is final).
//
// Every condition and Event reason is an api.Reason. The engine reaches
// Helm only through the Helm interface it declares (internal/helm's
// *Client implements it).
//
// The steady state (InSync) renders nothing and calls neither Helm nor the
// API server: change detection is by digest.
package release
