// Package e2e holds end-to-end tests: they build the chartkeeper binary and
// the make targets users run, start them as separate processes against the
// real local cluster, and check what a user would see.
//
// # Parallel tests
//
// All tests share one cluster. A test calls parallel(t, about) when
// everything it does stays in namespaces of its own: its operator is
// confined to its namespace (WATCH_NAMESPACE, as appFixture, kindFixture
// and bundledFixture run it) or watches only kinds no other test uses (the
// benchmark's, the corpus walk's), and it changes no object another test
// reads (CRDs of shared kinds are applied identically by every test that
// needs them). Tests that run an operator over all namespaces on a shared
// kind, restart or replace shared CRDs, deploy and undeploy the operator,
// count their operator's API requests against limits that load can
// exceed, or must wait out an action timeout that load would make their
// own actions overrun, stay serial. A confined operator that must make
// exactly zero requests over an idle window (read from its own metrics)
// may run in parallel: load cannot add requests to nothing.
//
// Go runs the serial tests first, one at a time, then the parallel ones
// together, as many at once as go test -parallel (set by hack/test.sh)
// says. They start longest first (test/framework/longestfirst): about is
// roughly how long a test takes in a full make test on 2 cores, so that
// the suite does not end with a two-minute test that started last. A
// test's parallel subtests call t.Parallel() and run beside their
// parent's slot.
//
// TestMain starts building the operator binaries at once (buildBinary
// waits for them), so the links run beside the serial tests. They are
// built by hack/golink.sh, through Go's build cache: a binary whose
// sources did not change is copied, not linked.
package e2e
