#!/usr/bin/env bash
# hack/gotest.sh [go test flags] -- PACKAGES...
#
# go test as make test and make test-unit run it. Linking is most of the
# time of a run whose results are not cached (a test binary that links
# Helm takes 4-7 s to link on 2 cores, and there are about forty), so each
# test binary is kept in TESTBIN (default: chartkeeper/test-binaries in
# the user's cache directory, beside Go's build cache) and built with
# -trimpath: go test -o skips the link when the file there already carries
# the build ID it would link, so a binary whose sources did not change is
# not linked again, in this clone or in a fresh clone on the same machine.
# The tests themselves run whenever their results are not cached. Files
# are replaced by rename, so a binary that is running is never written.
# No vet: make lint vets every package with all of go vet's checks. No
# symbol table or DWARF (TEST_LDFLAGS, default "-s -w"): each link is
# about a fifth cheaper, and panics still print function names and lines.
set -euo pipefail
flags=()
while [[ $# -gt 0 && $1 != -- ]]; do
	flags+=("$1")
	shift
done
[[ $# -gt 1 ]] || { echo "usage: hack/gotest.sh [go test flags] -- PACKAGES..." >&2; exit 2; }
shift
bins="${TESTBIN:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/chartkeeper/test-binaries}"
# Only packages with tests have a binary, and go test -o DIR/ names it
# after the last element of the package's path: packages that share one
# go to different directories (1/, 2/, ...), one go test run each, in the
# order given.
mapfile -t tested < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' "$@" | grep .)
declare -A seen=()
runs=()
for p in "${tested[@]}"; do
	n=$((${seen[${p##*/}]:-0} + 1))
	seen[${p##*/}]=$n
	runs[n]+=" $p"
done
rc=0
for n in "${!runs[@]}"; do
	mkdir -p "$bins/$n"
	# shellcheck disable=SC2086 # the packages of run n, split on purpose
	go test -trimpath -vet=off -ldflags="${TEST_LDFLAGS--s -w}" -o "$bins/$n/" "${flags[@]}" ${runs[n]} || rc=$?
done
exit "$rc"
