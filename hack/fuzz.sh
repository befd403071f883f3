#!/usr/bin/env bash
# make fuzz (and the fuzz smoke of make test): run every native Go fuzz
# target of the module, found by grep (func FuzzXxx(f *testing.F) in a
# *_test.go file of a package of this module, so a new target needs no
# edit here), each for FUZZTIME (default 1m), as
#   go test -vet=off -run='^$' -fuzz='^FuzzXxx$' -fuzztime=$FUZZTIME ./pkg
# would, but cheaper (vet off: make lint vets every package already):
#  - Go fuzzes one package per build, and the build (every dependency
#    compiled with coverage instrumentation, then a large test binary
#    linked) costs more than a few seconds of fuzzing. So each package's
#    fuzz binary is built once for all its targets, with go test -c -fuzz,
#    into FUZZ_BIN (default chartkeeper/fuzz-binaries in the user's cache
#    directory), with -trimpath, and kept there: go links it again only
#    when the package or a dependency changed, in this clone or in a fresh
#    one on the same machine, and the instrumented packages stay in the
#    build cache (GOCACHE) as usual.
#  - Then the targets fuzz FUZZ_JOBS at a time (default: the number of
#    CPUs), each with FUZZ_PARALLEL workers (default 1): the same CPU as
#    one target at a time with a worker per CPU, in a fraction of the wall
#    clock. The fuzz time includes a worker's start and the baseline run
#    of the corpus: a target whose time (in seconds) ran out before it
#    fuzzed anything (a busy machine) runs once more, for twice the time.
# Each target runs from its package's directory with go test's corpus
# locations: its seed corpus and failing inputs under the package's
# testdata/fuzz/FuzzXxx/ (commit a failing input with its fix: it becomes
# a regression test of plain go test), the inputs it found interesting in
# $GOCACHE/fuzz/<import path>/FuzzXxx/ (the next run starts from them).
# A failing target fails the run (after the others have run), its output
# printed. FUZZ_MATCH (a grep -E pattern on the target names) runs only
# some.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-1m}
match=${FUZZ_MATCH:-.}
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
parallel=${FUZZ_PARALLEL:-1}
((jobs >= 1)) || jobs=1
bin=${FUZZ_BIN:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/chartkeeper/fuzz-binaries}
gocache=$(go env GOCACHE)
if [[ -z $gocache || $gocache == off ]]; then
	echo "fuzz: GOCACHE is off; the fuzz corpus lives in the build cache" >&2
	exit 1
fi

# The module's packages (nested modules such as hack/tools are not its own): directory -> import path.
declare -A importPath=()
while read -r dir path; do importPath[$dir]=$path; done < <(go list -f '{{.Dir}} {{.ImportPath}}' ./... | sed "s|^$PWD|.|")

targets=() # "dir name"
dirs=()    # the packages to build, in order
declare -A seen=()
while IFS=: read -r file line; do
	dir=$(dirname "$file")
	[[ -n ${importPath[$dir]:-} ]] || continue
	name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$line")
	grep -qE -- "$match" <<<"$name" || continue
	targets+=("$dir $name")
	[[ -n ${seen[$dir]:-} ]] || dirs+=("$dir")
	seen[$dir]=1
done < <(grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' . | sort)
if [[ ${#targets[@]} -eq 0 ]]; then
	echo "fuzz: no fuzz target found" >&2
	exit 1
fi

mkdir -p "$bin"
bin=$(cd "$bin" && pwd)
logs=$(mktemp -d "${TMPDIR:-/tmp}/fuzz.XXXXXX")
trap 'rm -rf "$logs"' EXIT
# binary is the fuzz test binary of a package directory; key names a target's files.
binary() { echo "$bin/$(tr / _ <<<"${importPath[$1]}").test"; }
key() { echo "$logs/$(tr / _ <<<"${importPath[$1]}").$2"; }

start=$(date +%s)
# -s -w: no symbol table nor DWARF, a quicker link; a failure's stack trace
# still names functions and lines.
for dir in "${dirs[@]}"; do
	if ! go test -c -trimpath -vet=off -fuzz=. -ldflags='-s -w' -o "$(binary "$dir")" "$dir" >"$logs/build.log" 2>&1; then
		echo "fuzz: FAIL building the fuzz test binary of $dir:" >&2
		cat "$logs/build.log" >&2
		exit 1
	fi
done
built=$(date +%s)
echo "fuzz: ${#targets[@]} targets in ${#dirs[@]} packages, ${fuzztime} each, ${jobs} at a time (binaries built in $((built - start))s, in $bin)"

# fuzz runs one target and records its outcome (never fails itself).
fuzz() {
	local dir=$1 name=$2 out began rc=0 last fuzzed again=""
	out=$(key "$dir" "$name").log
	began=$(date +%s)
	once() {
		rc=0
		(cd "$dir" && exec "$(binary "$dir")" -test.run='^$' -test.fuzz="^${name}\$" -test.fuzztime="$1" \
			-test.parallel="$parallel" -test.fuzzcachedir="$gocache/fuzz/${importPath[$dir]}" -test.paniconexit0) >"$out" 2>&1 || rc=$?
		# What it did: the inputs it fuzzed (go's execs count the baseline
		# run of the corpus too), and how many of them were new coverage.
		local corpus execs
		corpus=$(sed -nE 's/.*gathering baseline coverage: [0-9]+\/([0-9]+) completed, now fuzzing.*/\1/p' "$out" | tail -n 1)
		execs=$(sed -nE 's/.*, execs: ([0-9]+) .*/\1/p' "$out" | tail -n 1)
		fuzzed=0
		if [[ -n $corpus && -n $execs ]]; then
			fuzzed=$((execs - corpus))
			last="fuzzed $fuzzed inputs after the baseline run of its corpus of $corpus, $(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' "$out" | tail -n 1) of them new coverage"
		else
			last="fuzzed nothing: the time ran out in the baseline run of its corpus ($(grep -oE '[0-9]+/[0-9]+ completed' "$out" | tail -n 1 || true))"
		fi
	}
	once "$fuzztime"
	# A worker's start and the baseline run of the corpus count in the
	# fuzz time: a short time on a busy machine can end before any input
	# was fuzzed. Then once more, for twice the time.
	if [[ $rc -eq 0 && $fuzzed -le 0 && $fuzztime =~ ^([0-9]+)s$ ]]; then
		again=" (nothing fuzzed in ${fuzztime}, spent on the worker's start and the baseline run: ran again for $((2 * BASH_REMATCH[1]))s)"
		once "$((2 * BASH_REMATCH[1]))s"
	fi
	if [[ $rc -ne 0 ]] && ! grep -q 'Failing input written to' "$out" &&
		grep -qxE -- "--- FAIL: $name \([0-9.]+s\)" "$out" && [[ $(grep -A1 -E -- "^--- FAIL: $name " "$out" | tail -n 1) =~ ^[[:space:]]+context\ deadline\ exceeded$ ]]; then
		# Go's fuzzing coordinator may report its own -fuzztime deadline as
		# a failure (golang.org/issue/75804, fixed in Go 1.27): no input
		# failed, none was written.
		echo "fuzz: ok   $name ($dir) in $(($(date +%s) - began))s, $last$again (go reported its fuzztime deadline as a failure, golang.org/issue/75804: ignored)"
		rc=0
	elif [[ $rc -eq 0 ]]; then
		echo "fuzz: ok   $name ($dir) in $(($(date +%s) - began))s, $last$again"
	else
		echo "fuzz: FAIL $name ($dir) in $(($(date +%s) - began))s$again"
	fi
	echo "$rc" >"$(key "$dir" "$name").rc"
}
running=0
for t in "${targets[@]}"; do
	read -r dir name <<<"$t"
	if ((running >= jobs)); then
		wait -n || true
		running=$((running - 1))
	fi
	fuzz "$dir" "$name" &
	running=$((running + 1))
done
wait

failed=()
for t in "${targets[@]}"; do
	read -r dir name <<<"$t"
	if [[ $(cat "$(key "$dir" "$name").rc" 2>/dev/null || echo 1) -ne 0 ]]; then
		echo "fuzz: $name ($dir) failed:"
		cat "$(key "$dir" "$name").log"
		failed+=("$name ($dir)")
	fi
done
echo "fuzz: ${#targets[@]} targets in $(($(date +%s) - start))s"
if [[ ${#failed[@]} -gt 0 ]]; then
	echo "fuzz: FAILED: ${failed[*]}: the failing inputs are under testdata/fuzz/<target>/ of their packages (commit them with the fix); go test -run=<target>/<input> ./pkg replays one" >&2
	exit 1
fi
