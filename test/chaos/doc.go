// Package chaos is chartkeeper's chaos harness (make chaos, and a short run
// in make test). It keeps many custom resources, of up to three kinds
// (kinds.go: one plain, one whose chart keeps an object with
// helm.sh/resource-policy: keep, one whose every action runs a chart hook)
// spread over namespaces, under continuous spec changes while it injects
// faults, in turn and at random moments:
//
//   - it SIGKILLs the operator while a release is pending-install,
//     pending-upgrade or pending-rollback, while Helm deletes an
//     uninstalled release's objects, right after an abandoned pending
//     revision was unlocked (marked failed) and before it is remediated,
//     halfway through a drift correction (objects deleted by hand, some
//     re-created), and once a chart hook has run (it provokes each
//     operation, watches for the state, and kills when it sees it; a kill
//     that missed its state is counted as such);
//   - it crashes (SIGKILL) and restarts the API server and etcd, and
//     freezes them (SIGSTOP for seconds, then SIGCONT: a partition as the
//     operator sees it);
//   - it deletes and edits released objects behind Helm's back.
//
// The operator runs under a supervisor, as a Deployment would run it: when
// it exits by itself (leader lease lost while the API server was down, say)
// it is started again, and that is counted too.
//
// Then the faults stop. What they left must settle with no spec changed
// (the time it takes is the run's "time to converge after the last
// fault"). A quarter of the live custom resources get a spec the API
// server rejects: each must settle, its release not left pending, with
// Ready=False and a condition naming what was rejected. Then every custom
// resource is given a final spec, and the harness checks that nothing was
// lost: each release converges to its resource's latest spec (Ready,
// revision deployed, objects as specified), deleted resources leave no
// release Secret and no object behind, no released object or Secret
// belongs to nobody, history stays within maxHistory, and no kept object
// was ever deleted. Run returns a Report of figures; Report.Lost must be 0.
package chaos
