#!/usr/bin/env bash
# Checks that product and tooling stay apart (called by "make lint"):
#  (a) every package under internal/ links into ./cmd/chartkeeper;
#  (b) nothing of the module outside internal/ and cmd/ (test/, hack/) links
#      into ./cmd/chartkeeper: the binary never depends on tooling;
#  (c) Helm behind one door: among the product packages (cmd/..., internal/...)
#      only internal/helm imports Helm's action, storage, kube and postrender
#      packages (non-test imports, i.e. what links into the binary);
#  (d) the cache leaves stay leaves: internal/intern, internal/dictpack and
#      internal/recorder import no other package of this module (non-test
#      imports), so the caches and the Event sender never pull the engine in.
# Prints every violation and exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."

module=$(go list -m)
binary=./cmd/chartkeeper
helm_door=$module/internal/helm
helm_private=(
  helm.sh/helm/v3/pkg/action
  helm.sh/helm/v3/pkg/storage
  helm.sh/helm/v3/pkg/storage/driver
  helm.sh/helm/v3/pkg/kube
  helm.sh/helm/v3/pkg/postrender
  github.com/operator-framework/helm-operator-plugins/pkg/storage
)
leaves=(
  internal/intern
  internal/dictpack
  internal/recorder
)

failed=0
fail() {
  echo "verify-layout: $*" >&2
  failed=1
}

deps=$(go list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' "$binary" | grep -E "^$module(/|$)" | sort)
internal=$(go list ./internal/... | sort)
# "package import" lines: of every module package the binary links, and of
# every product package (linked or not).
imports='{{$p := .ImportPath}}{{range .Imports}}{{$p}} {{.}}{{"\n"}}{{end}}'
linked_edges=$(go list -deps -f "$imports" "$binary" | grep -E "^$module/" || true)
product_edges=$(go list -f "$imports" ./cmd/... ./internal/...)

# (a) internal/ holds exactly the packages linked into the binary.
while read -r pkg; do
  [ -n "$pkg" ] || continue
  fail "(a) ${pkg#"$module"/} is under internal/ but not linked into $binary: move it out of internal/ (tooling lives under test/)"
done < <(comm -23 <(echo "$internal") <(echo "$deps"))

# (b) the binary links no tooling.
while read -r pkg; do
  [ -n "$pkg" ] || continue
  case "$pkg" in
    "$module"/internal/* | "$module"/cmd/*) continue ;;
  esac
  importers=$(echo "$linked_edges" | awk -v dep="$pkg" -v m="$module/" '$2 == dep {sub(m, "", $1); print $1}' | sort -u | paste -sd, - | sed 's/,/, /g')
  fail "(b) ${pkg#"$module"/} is tooling but links into $binary (imported by ${importers:-?}): product code must not import test/ or hack/"
done <<<"$deps"

# (c) Helm behind one door.
for helm_pkg in "${helm_private[@]}"; do
  while read -r pkg; do
    [ -n "$pkg" ] || continue
    [ "$pkg" = "$helm_door" ] && continue
    fail "(c) ${pkg#"$module"/} imports $helm_pkg: only ${helm_door#"$module"/} may (Helm behind one door)"
  done < <(echo "$product_edges" | awk -v dep="$helm_pkg" '$2 == dep {print $1}' | sort -u)
done

# (d) the cache leaves import nothing of the module (a direct import is
# enough to check: with none, there is no indirect one either).
for leaf in "${leaves[@]}"; do
  while read -r dep; do
    [ -n "$dep" ] || continue
    fail "(d) $leaf imports ${dep#"$module"/}: $leaf is a leaf and must import no package of $module (pass what it needs in from its caller)"
  done < <(echo "$product_edges" | awk -v pkg="$module/$leaf" -v m="$module" '$1 == pkg && ($2 == m || index($2, m "/") == 1) {print $2}' | sort -u)
done

if [ "$failed" -ne 0 ]; then
  echo "verify-layout: FAILED: internal/ holds the product (what cmd/chartkeeper links), test/ the tooling, internal/helm is the only door to Helm, and internal/{intern,dictpack,recorder} are leaves" >&2
  exit 1
fi
echo "verify-layout: ok ($(echo "$internal" | wc -l) packages under internal/, all linked into $binary; no tooling linked; Helm behind internal/helm; ${#leaves[@]} leaves import nothing of $module)"
