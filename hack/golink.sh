#!/usr/bin/env bash
# hack/golink.sh DIR PACKAGE OUT [LDFLAGS]
#
# Builds the command in PACKAGE, of the Go module in DIR, into OUT, through
# Go's build cache: go run keeps every executable it links there (Go 1.24
# and later) and runs it through -exec, here cp, which copies it to OUT. A
# command whose sources did not change is copied, not linked again, even
# into a fresh clone. No cgo; paths trimmed. LDFLAGS default to "-s -w" (no
# symbol table or DWARF, a fifth cheaper to link; panics still print
# function names and lines).
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: hack/golink.sh DIR PACKAGE OUT [LDFLAGS]" >&2; exit 2; }
out=$(realpath -m "$3")
cd "$1"
CGO_ENABLED=0 exec go run -exec "cp --remove-destination" -trimpath -ldflags="${4--s -w}" "$2" "$out"
