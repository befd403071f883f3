# chartkeeper - run "make help" for the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Go builds and tests without cgo: nothing here needs it, and with it every
# test binary that links Helm links externally (kustomize, under Helm's kube
# client, imports "plugin"), twice as slow. CGO_ENABLED=1 for the race
# detector: make test-unit CGO_ENABLED=1 TESTFLAGS=-race.
export CGO_ENABLED ?= 0

# Test binaries carry no symbol table or DWARF (panics still print
# function names and lines): each link is about a fifth cheaper. They are
# kept in TESTBIN by hack/gotest.sh, and tools are built by hack/golink.sh
# through Go's build cache, so a fresh clone on a warm machine links again
# only what changed. go run and go vet take -trimpath too: then what Go's
# caches keep of them does not depend on where the clone is, and a fresh
# clone on a warm machine reuses it (make lint there: about 65 s without,
# 7 s with).
TEST_LDFLAGS := -s -w

# Local cluster used by "make run" and "make cluster-*".
CLUSTER_DIR ?= .cluster
NODES ?= 3
# Where "make run" serves metrics and probes (loopback only).
METRICS_ADDR ?= 127.0.0.1:8080
PROBE_ADDR ?= 127.0.0.1:8081
# Image built by "make docker-build".
IMG ?= chartkeeper:dev
# go test flags for "make test", e.g. TESTFLAGS='-run TestFoo -v'.
TESTFLAGS ?=
# Time per fuzz target: "make fuzz" (e.g. make fuzz FUZZTIME=10m) and the smoke run of "make test".
FUZZTIME ?= 1m
FUZZ_SMOKE ?= 3s

# Product sources (bin/chartkeeper) and tooling sources (bin/devcluster: test/...).
PRODUCT_SOURCES := $(shell find cmd internal -name '*.go' 2>/dev/null) go.mod go.sum
TOOLING_SOURCES := $(PRODUCT_SOURCES) $(shell find test -name '*.go' -not -name '*_test.go' 2>/dev/null)

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n\n"} /^[a-zA-Z_-]+:.*##/ {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: tools
tools: ## Build the local control plane, kubectl, kwok and helm into bin/ (about 10 min the first time).
	@hack/build-tools.sh

# kubectl alone, for the targets that act on the cluster of KUBECONFIG (hack/build-tools.sh kubectl).
bin/kubectl: hack/tools/go.mod hack/tools/go.sum
	@hack/build-tools.sh kubectl

.PHONY: build
build: bin/chartkeeper ## Build the operator binary bin/chartkeeper.

bin/chartkeeper: $(PRODUCT_SOURCES)
	CGO_ENABLED=0 go build -trimpath -o $@ ./cmd/chartkeeper

bin/devcluster: $(TOOLING_SOURCES)
	hack/golink.sh . ./test/devcluster/cmd $@

.PHONY: peers
peers: bin/helm-operator ## Build the peer helm-operator-plugins v0.9.1 (pinned in hack/peers/go.mod; the benchmark and the takeover tests run it) into bin/.

bin/helm-operator: hack/peers/go.mod hack/peers/go.sum
	hack/golink.sh hack/peers github.com/operator-framework/helm-operator-plugins $@

# Benchmark settings (docs/benchmarks.md), e.g. make bench BENCH_N=1000 BENCH_OPERATOR=hop.
export BENCH_N BENCH_REPEAT BENCH_SCENARIO BENCH_CONCURRENCY BENCH_IDLE BENCH_TIMEOUT BENCH_OPERATOR BENCH_OPERATOR_NAME BENCH_PPROF BENCH_OUT BENCH_KUBECONFIG BENCH_CLUSTER_DIR

.PHONY: bench
bench: tools bin/chartkeeper $(if $(filter hop,$(BENCH_OPERATOR)),bin/helm-operator) ## Time chartkeeper vs the control plane's floor (and BENCH_OPERATOR=hop|"cmd") on a local cluster; see docs/benchmarks.md.
	go run ./test/bench/cmd

# Chaos settings (docs/chaos.md), e.g. make chaos CHAOS_DURATION=10m CHAOS_SEED=42;
# at scale: make chaos CHAOS_CRS=200 CHAOS_NAMESPACES=4 CHAOS_KILLS=100 CHAOS_MAX_DURATION=40m.
export CHAOS_CRS CHAOS_NAMESPACES CHAOS_KINDS CHAOS_DURATION CHAOS_MAX_DURATION CHAOS_KILLS CHAOS_KILL_WEIGHT \
	CHAOS_FAULT_EVERY CHAOS_CONFIGMAPS CHAOS_CATCH_TIMEOUT CHAOS_CONVERGE_TIMEOUT CHAOS_FAULTS CHAOS_SEED CHAOS_OUT

.PHONY: chaos
chaos: tools bin/chartkeeper ## Kill the operator mid-operation, restart and pause the API server and etcd, tamper with objects; check nothing is lost (docs/chaos.md).
	go run ./test/chaos/cmd

# Soak settings (docs/soak.md), e.g. make soak SOAK_CRS=50 SOAK_DURATION=3m SOAK_SAMPLE=20s.
export SOAK_CRS SOAK_DURATION SOAK_RATE SOAK_SAMPLE SOAK_MAX_GROWTH SOAK_SEED SOAK_OUT

.PHONY: soak
soak: tools bin/chartkeeper ## An hour of churn over 1,000 custom resources: the operator's RSS, goroutines and open fds must stay flat (docs/soak.md).
	go run ./test/soak/cmd

.PHONY: cluster-up
cluster-up: tools bin/devcluster ## Start the local cluster (or reuse the running one) in CLUSTER_DIR (default .cluster).
	@bin/devcluster up --dir $(CLUSTER_DIR) --nodes $(NODES)

.PHONY: cluster-down
cluster-down: bin/devcluster ## Stop the local cluster's processes (state is kept).
	@bin/devcluster down --dir $(CLUSTER_DIR)

.PHONY: cluster-status
cluster-status: bin/devcluster ## Show the local cluster's processes and health.
	@bin/devcluster status --dir $(CLUSTER_DIR)

.PHONY: run
run: bin/chartkeeper ## Run the operator: on KUBECONFIG if it answers, else on the local cluster (built then).
	@CLUSTER_DIR=$(CLUSTER_DIR) NODES=$(NODES) METRICS_ADDR=$(METRICS_ADDR) PROBE_ADDR=$(PROBE_ADDR) hack/run.sh

.PHONY: test
test: tools bin/devcluster peers lint ## Run every test against a fresh local cluster, then stop it.
	@TESTFLAGS="$(TESTFLAGS)" TEST_LDFLAGS="$(TEST_LDFLAGS)" FUZZ_SMOKE="$(FUZZ_SMOKE)" hack/test.sh

.PHONY: fuzz
fuzz: ## Run every fuzz target (func FuzzXxx in *_test.go, found by hack/fuzz.sh) for FUZZTIME each (default 1m).
	@FUZZTIME=$(FUZZTIME) hack/fuzz.sh

.PHONY: test-unit
test-unit: ## Run every test that needs no cluster and no bin/ (go test -short; Go keeps the results of unchanged packages, hack/gotest.sh their binaries; make lint vets).
	TEST_LDFLAGS="$(TEST_LDFLAGS)" hack/gotest.sh -short $(TESTFLAGS) -- ./...

.PHONY: manifests
manifests: ## Generate CRDs (schemas from the charts), the manager ClusterRole, missing samples, the operator chart and OLM bundle under config/.
	go run -trimpath ./cmd/chartkeeper manifests

# Chart packaging: make create-api CHART=path/to/chart-or.tgz GROUP=apps.example.com VERSION=v1alpha1 KIND=Memcached [HOOK=1] [SERVICE_ACCOUNT=chartkeeper-release]
CHART ?=
GROUP ?=
VERSION ?= v1alpha1
KIND ?=
HOOK ?=

.PHONY: create-api
create-api: ## Package a chart as a new kind: CHART=dir|tgz GROUP=... VERSION=... KIND=... [HOOK=1 for a Go hook stub] [SERVICE_ACCOUNT=name: releases run as it].
	go run -trimpath ./cmd/chartkeeper create-api --chart "$(CHART)" --group "$(GROUP)" --version "$(VERSION)" --kind "$(KIND)" $(if $(HOOK),--hook) $(if $(SERVICE_ACCOUNT),--service-account '$(SERVICE_ACCOUNT)')

.PHONY: images
images: ## List every image the bundled charts release (for mirroring into an air-gapped registry).
	@go run -trimpath ./cmd/chartkeeper images

.PHONY: helm-chart bundle
helm-chart: manifests ## Generate the operator's Helm chart config/chart/chartkeeper from config/ (make manifests writes it).
bundle: manifests ## Generate the OLM bundle config/bundle (CSV, CRDs, annotations.yaml, bundle.Dockerfile) from config/.

.PHONY: verify-manifests
verify-manifests: ## Fail if the generated manifests under config/ are stale.
	go run -trimpath ./cmd/chartkeeper manifests --check

.PHONY: install
install: bin/kubectl ## Install the CRDs into the cluster of KUBECONFIG.
	bin/kubectl apply -k config/crd

.PHONY: uninstall
uninstall: bin/kubectl ## Remove the CRDs (and every custom resource) from the cluster of KUBECONFIG.
	bin/kubectl delete --ignore-not-found -k config/crd

.PHONY: deploy
deploy: bin/kubectl ## Deploy the operator (config/default: CRDs, RBAC, manager image IMG) to the cluster of KUBECONFIG.
	bin/kubectl kustomize config/default | sed 's|image: chartkeeper:dev|image: $(IMG)|' | bin/kubectl apply -f -

.PHONY: undeploy
undeploy: bin/kubectl ## Remove what deploy created (CRDs and every custom resource too) from the cluster of KUBECONFIG.
	bin/kubectl kustomize config/default | bin/kubectl delete --ignore-not-found -f -

.PHONY: lint
lint: verify-manifests bin/staticcheck ## gofmt, go vet, staticcheck, the product/tooling layout check and the generated-files check.
	@bad=$$(gofmt -l cmd internal hack test 2>/dev/null); if [ -n "$$bad" ]; then echo "gofmt needed:"; echo "$$bad"; exit 1; fi
	go vet -trimpath ./...
	bin/staticcheck ./...
	hack/verify-layout.sh

# staticcheck, pinned in hack/lint/go.mod (its own module: the linter's
# dependencies stay out of the product's and the tools' graphs).
bin/staticcheck: hack/lint/go.mod hack/lint/go.sum
	hack/golink.sh hack/lint honnef.co/go/tools/cmd/staticcheck $@

.PHONY: docker-build
docker-build: ## Build the manager image IMG (default chartkeeper:dev) (needs a container engine).
	docker build -t $(IMG) .

.PHONY: clean
clean: ## Remove bin/ and local state (stops the local cluster first).
	-@[ -x bin/devcluster ] && bin/devcluster down --dir $(CLUSTER_DIR) --purge
	rm -rf bin tmp
