#!/usr/bin/env bash
# make run: run the operator against $KUBECONFIG when it is set and its
# cluster answers; otherwise bring up (or reuse) the local cluster in
# $CLUSTER_DIR and run against that, building the local cluster's tools
# (make tools bin/devcluster) only then: make run builds only kubectl and
# the operator before it starts. On the local cluster, "devcluster
# etcd-pods" runs a real etcd process for each EtcdCluster Pod (kwok starts
# no containers) and the operator reaches them on 127.0.0.1. Ctrl-C stops the
# operator and those members; the local cluster keeps running for the next
# "make run" (make cluster-down stops it).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CLUSTER_DIR:=.cluster}" "${NODES:=3}" "${METRICS_ADDR:=127.0.0.1:8080}" "${PROBE_ADDR:=127.0.0.1:8081}"

kc=""
if [[ -n "${KUBECONFIG:-}" ]]; then
  if bin/kubectl --request-timeout=5s get --raw=/readyz >/dev/null 2>&1; then
    kc="$KUBECONFIG"
    server=$(bin/kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
    echo "run: using the cluster of KUBECONFIG=$KUBECONFIG (context $(bin/kubectl config current-context), $server)"
  else
    echo "run: KUBECONFIG=$KUBECONFIG is set but its cluster does not answer; using the local cluster instead"
  fi
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
fi
bin/kubectl --kubeconfig "$kc" apply -k config/crd >/dev/null
echo "run: CRDs from config/crd installed"
echo "run: chartkeeper on $kc: probes http://$PROBE_ADDR/healthz and /readyz, metrics http://$METRICS_ADDR/metrics; Ctrl-C stops it"
bin/chartkeeper run --kubeconfig "$kc" --watches-file watches.yaml \
  --metrics-bind-address "$METRICS_ADDR" --health-probe-bind-address "$PROBE_ADDR" --zap-devel "${extra[@]}"
