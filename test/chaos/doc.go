// Package chaos is chartkeeper's chaos harness (make chaos, and a short run
// in make test). It keeps many custom resources under continuous spec
// changes while it injects faults, in turn and at random moments:
//
//   - it SIGKILLs the operator while a release is pending-install,
//     pending-upgrade, pending-rollback or uninstalling (it provokes each
//     operation, watches the release Secrets, and kills when it sees the
//     state; a kill that missed its state is counted as such);
//   - it crashes (SIGKILL) and restarts the API server and etcd;
//   - it deletes and edits released objects behind Helm's back.
//
// The operator runs under a supervisor, as a Deployment would run it: when
// it exits by itself (leader lease lost while the API server was down, say)
// it is started again, and that is counted too.
//
// Then the faults stop. A quarter of the live custom resources get a spec
// the API server rejects: each must settle, its release not left pending,
// with Ready=False and a condition naming what was rejected. Then every
// custom resource is given a final spec, and the harness checks that
// nothing was lost: each release converges to its
// resource's latest spec (Ready, revision deployed, objects as specified),
// deleted resources leave no release Secret and no object behind, no
// released object or Secret belongs to nobody, and history stays within
// maxHistory. Run returns a Report of figures; Report.Lost must be 0.
package chaos
