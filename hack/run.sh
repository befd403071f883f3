#!/usr/bin/env bash
# make run: run the operator against $KUBECONFIG when it is set and its
# cluster answers; otherwise bring up (or reuse) the local cluster in
# $CLUSTER_DIR and run against that, building the local cluster's tools
# (make tools bin/devcluster) only then: make run builds only the operator
# before it starts, which checks the cluster and applies the CRDs itself
# (chartkeeper install-crds). On the local cluster, "devcluster
# etcd-pods" runs a real etcd process for each EtcdCluster Pod (kwok starts
# no containers) and the operator reaches them on 127.0.0.1. Ctrl-C stops the
# operator and those members; the local cluster keeps running for the next
# "make run" (make cluster-down stops it).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CLUSTER_DIR:=.cluster}" "${NODES:=3}" "${METRICS_ADDR:=127.0.0.1:8080}" "${PROBE_ADDR:=127.0.0.1:8081}"

kc=""
if [[ -n "${KUBECONFIG:-}" ]]; then
  # The operator checks the cluster answers and applies its CRDs: make run needs no kubectl.
  set +e
  bin/chartkeeper install-crds --kubeconfig "$KUBECONFIG" config/crd/bases
  rc=$?
  set -e
  case $rc in
    0) kc="$KUBECONFIG"; echo "run: using the cluster of KUBECONFIG=$KUBECONFIG" ;;
    4) echo "run: KUBECONFIG=$KUBECONFIG is set but its cluster does not answer; using the local cluster instead" ;;
    *) exit "$rc" ;;
  esac
fi
extra=()
if [[ -z "$kc" ]]; then
  make --no-print-directory tools bin/devcluster
  bin/devcluster up --dir "$CLUSTER_DIR" --nodes "$NODES"
  kc="$(cd "$CLUSTER_DIR" && pwd)/admin.kubeconfig"
  echo "run: using the local cluster in $CLUSTER_DIR"
  bin/devcluster etcd-pods --dir "$CLUSTER_DIR" &
  pods=$!
  trap 'kill "$pods" 2>/dev/null || true; wait "$pods" 2>/dev/null || true' EXIT
  extra=(--etcd-member-addressing loopback)
  bin/chartkeeper install-crds --kubeconfig "$kc" config/crd/bases
fi
echo "run: chartkeeper on $kc: probes http://$PROBE_ADDR/healthz and /readyz, metrics http://$METRICS_ADDR/metrics; Ctrl-C stops it"
bin/chartkeeper run --kubeconfig "$kc" --watches-file watches.yaml \
  --metrics-bind-address "$METRICS_ADDR" --health-probe-bind-address "$PROBE_ADDR" --zap-devel "${extra[@]}"
