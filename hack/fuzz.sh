#!/usr/bin/env bash
# make fuzz (and the fuzz smoke of make test): run every native Go fuzz
# target of the module, found by grep (func FuzzXxx(f *testing.F) in a
# *_test.go file of a package of this module, so a new target needs no
# edit here), one after the other, each for FUZZTIME (default 1m):
#   go test -vet=off -run='^$' -fuzz='^FuzzXxx$' -fuzztime=$FUZZTIME ./pkg
# (vet off: make lint vets every package already)
# A failing target fails the run (after the others have run); Go writes
# the failing input under the package's testdata/fuzz/FuzzXxx/.
# FUZZ_MATCH (a grep -E pattern on the target names) runs only some.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-1m}
match=${FUZZ_MATCH:-.}

# The module's package directories (nested modules such as hack/tools are not its own).
declare -A ours=()
while read -r dir; do ours[$dir]=1; done < <(go list -f '{{.Dir}}' ./... | sed "s|^$PWD|.|")

targets=()
while IFS=: read -r file line; do
	dir=$(dirname "$file")
	[[ -n ${ours[$dir]:-} ]] || continue
	name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$line")
	grep -qE -- "$match" <<<"$name" || continue
	targets+=("$dir $name")
done < <(grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' . | sort)
if [[ ${#targets[@]} -eq 0 ]]; then
	echo "fuzz: no fuzz target found" >&2
	exit 1
fi

echo "fuzz: ${#targets[@]} targets, ${fuzztime} each"
failed=()
start=$(date +%s)
for t in "${targets[@]}"; do
	read -r dir name <<<"$t"
	began=$(date +%s)
	if go test -vet=off -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" "$dir" >"${TMPDIR:-/tmp}/fuzz-$$.log" 2>&1; then
		echo "fuzz: ok   $name ($dir) in $(($(date +%s) - began))s"
	else
		echo "fuzz: FAIL $name ($dir) in $(($(date +%s) - began))s:"
		cat "${TMPDIR:-/tmp}/fuzz-$$.log"
		failed+=("$name")
	fi
done
rm -f "${TMPDIR:-/tmp}/fuzz-$$.log"
echo "fuzz: ${#targets[@]} targets in $(($(date +%s) - start))s"
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "fuzz: failed: ${failed[*]} (the failing inputs are under testdata/fuzz/ of their packages; go test -run=<target>/<input> ./pkg replays one)" >&2
	exit 1
fi
