#!/usr/bin/env bash
# make test: start one local cluster for the whole run, run every Go test
# against it, and stop it (and everything it started) whatever the outcome.
# Beside the Go tests, at a lower priority, it runs every fuzz target for
# FUZZ_SMOKE (default 3s; hack/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=tmp/test-cluster
mkdir -p tmp
fuzzlog=tmp/fuzz-smoke.log
fuzz=""
cleanup() {
	[[ -z "$fuzz" ]] || kill -- "-$fuzz" 2>/dev/null || true # its process group
	bin/devcluster down --dir "$dir" --purge >/dev/null || echo "test: could not stop the test cluster in $dir" >&2
}
trap cleanup EXIT
bin/devcluster down --dir "$dir" --purge >/dev/null 2>&1 || true # a run that was killed may have left one
start=$(date +%s)
bin/devcluster up --dir "$dir" --nodes 2 >/dev/null
echo "test: local cluster up in $(( $(date +%s) - start ))s ($dir)"
export CHARTKEEPER_TEST_KUBECONFIG="$PWD/$dir/admin.kubeconfig"
# The fuzz smoke needs no cluster. It runs beside the Go tests at nice 10,
# so it takes the CPU time they leave idle (the end-to-end tests spend much
# of theirs waiting for the cluster) and little of the rest; hack/fuzz.sh
# builds each package's fuzz binary, kept between runs, then fuzzes the
# targets side by side. Its report follows the Go tests'.
# setsid gives it a process group of its own, which cleanup stops whole.
FUZZTIME="${FUZZ_SMOKE:-3s}" setsid nice -n 10 hack/fuzz.sh >"$fuzzlog" 2>&1 &
fuzz=$!
# End-to-end tests that keep to namespaces of their own run together
# (test/e2e/doc.go): most of their time is waiting for the cluster.
# The end-to-end package is named first: go test builds and starts
# packages in the order given (-p of them at once, the number of CPUs), so
# its long run starts at once and every other package is built and tested
# beside it, instead of ahead of it. hack/gotest.sh keeps the test
# binaries, so those whose sources did not change are not linked again.
# shellcheck disable=SC2086
hack/gotest.sh -count=1 -timeout 45m -parallel "${TEST_PARALLEL:-8}" ${TESTFLAGS:-} -- ./test/e2e ./...
fuzzed=0
wait "$fuzz" || fuzzed=$?
fuzz=""
cat "$fuzzlog"
if [[ $fuzzed != 0 ]]; then
	echo "test: FAIL: the fuzz smoke found a failing input or could not build (above); the Go tests passed" >&2
	exit 1
fi
