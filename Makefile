# The one entry point for building, running and checking the service.
# `make help` lists the targets.

SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/.bin
export PATH := $(BIN):$(PATH)

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: build postgres ## serve on 127.0.0.1: 8080 (REST), 9090 (gRPC) and 9464 (metrics), with a local database and a demo account
	bin/jobboard dev

.PHONY: run-tls
run-tls: build postgres ## make run over TLS, with a local CA and certificates made in .data/tls (README "TLS")
	bin/jobboard dev --tls

.PHONY: reset
reset: build ## remove .data/, so the next make run starts with an empty database and a new demo account (refused while make run is running)
	bin/jobboard dev --reset

.PHONY: build
build: docs-assets ## build bin/jobboard
	@echo "compiling bin/jobboard (the first build downloads and compiles the modules it needs: about two minutes on two cores; later builds take seconds)"
	$(GO) build -ldflags='$(BUILDINFO_LDFLAGS)' -o bin/jobboard ./cmd/jobboard

# The commit the binaries are built from, which jobboard version and the
# jobboard_build_info metric show (internal/buildinfo); empty outside a
# Git checkout. Set by the linker so it holds whatever GOFLAGS say.
BUILDINFO := github.com/truckjobs/jobboard/internal/buildinfo
BUILD_REVISION = $(shell git rev-parse HEAD 2>/dev/null)
BUILDINFO_LDFLAGS = -X $(BUILDINFO).revision=$(BUILD_REVISION) \
	-X $(BUILDINFO).commitTime=$(shell git log -1 --format=%cI 2>/dev/null) \
	-X $(BUILDINFO).modified=$(shell test -n "$$(git status --porcelain 2>/dev/null)" && echo true)

# The Swagger UI release that /docs serves, from the npm registry (pinned and
# checked in the script), embedded in the binary.
.PHONY: docs-assets
docs-assets: ## fetch the pinned Swagger UI that /docs serves (needed once before a plain go build or go test)
	@scripts/fetch-swagger-ui.sh

# gotestsum prints a line as each test ends (go test alone is silent until a
# package is done, two minutes for cmd/jobboard) and every failure in full at
# the end. withpg gives the tests a TMPDIR of their own and fails the run if
# they leave anything in it.
.PHONY: test
test: postgres pgbouncer docs-assets chromium test-tools loadgen test-alerts ## run every test against a throwaway PostgreSQL cluster, then each fuzz target for 1,000 inputs
	$(GO) run ./internal/cmd/withpg gotestsum --format testname -- -count=1 ./...
	$(MAKE) fuzz FUZZTIME=1000x

# The alert rules of deploy/prometheus, checked and unit-tested by the
# promtool of Debian's prometheus package (docs/operations.md).
.PHONY: test-alerts
test-alerts: prometheus ## check the alert rules and run their unit tests (promtool)
	promtool check rules deploy/prometheus/alerts.yml
	cd deploy/prometheus && promtool test rules alerts_test.yml

# The store's tests that race writers against each other (intakes, renames,
# deletes, count folds, backfills). A test that failed one run in five
# fails twenty runs with a chance of 99% (1 - 0.8^20); CI runs them so.
STORE_CONCURRENT_TESTS := TestJobTitleCountsConcurrent|TestJobTitleProfileChangeRacingAPair|TestDriverCountsExactAfterMixedWrites|TestCountBackfillWithWritesBetween|TestJobTitleBackfillWithWritesBetween|TestJobFacetCountsConcurrent|TestStatusCountBackfill
CONCURRENT_COUNT ?= 20

.PHONY: test-concurrency
test-concurrency: postgres docs-assets ## run the store's concurrent-writer tests CONCURRENT_COUNT (default 20) times each, about 4 minutes, to catch a flaky one
	$(GO) run ./internal/cmd/withpg $(GO) test -count=$(CONCURRENT_COUNT) -timeout 60m -run '^($(STORE_CONCURRENT_TESTS))$$' ./server/store/

# How long make fuzz runs each target: a time, or a count of inputs such as 5000x.
FUZZTIME ?= 2m

.PHONY: fuzz
fuzz: postgres docs-assets ## run each fuzz target for FUZZTIME (default 2m) against a throwaway PostgreSQL cluster
	GO=$(GO) $(GO) run ./internal/cmd/withpg scripts/fuzz.sh $(FUZZTIME)

# The tests that inject faults (SIGKILL, SIGTERM, a stopped database,
# contending writers); they log "figures:" lines, which docs/reliability.md quotes.
FAULT_TESTS := TestImportSurvivesSIGKILL|TestCallbackSurvivesSIGKILL|TestDatabaseOutage|TestSIGTERMUnderLoad|TestConcurrentWriters

.PHONY: test-faults
test-faults: postgres docs-assets ## run the fault tests (about 3 minutes); make test skips all but the import SIGKILL
	JOBBOARD_TEST_FAULTS=1 $(GO) run ./internal/cmd/withpg $(GO) test -count=1 -v -timeout 15m -run '^($(FAULT_TESTS))$$' ./cmd/jobboard/

# govulncheck needs the Go vulnerability database (vuln.go.dev), which the
# build machines cannot reach, so CI does not call this; run it where it can.
.PHONY: vulncheck
vulncheck: docs-assets ## report known vulnerabilities reachable from the code (pinned govulncheck; needs vuln.go.dev)
	$(GO) run golang.org/x/vuln/cmd/govulncheck@v1.9.0 ./...

.PHONY: soak
soak: postgres docs-assets tools loadgen ## mixed reads and writes at 200 and 1,000 connections, 60 s each, on the full data set (bench scenario 7)
	$(GO) run ./bench -only 7

.PHONY: bench
bench: postgres pgbouncer docs-assets tools loadgen ## measure every scenario against its floor; report in bench/results/
	$(GO) run ./bench

.PHONY: bench-quick
bench-quick: postgres pgbouncer docs-assets tools loadgen ## a one-minute run of the benchmark harness (small data, targets not judged)
	$(GO) run ./bench -quick

.PHONY: bench-scale
bench-scale: postgres docs-assets ## cost curves to 1,000,000 applications and 1,000 accounts (about half an hour); report and SVG plots in bench/results/
	$(GO) run ./bench -scale

.PHONY: bench-search
bench-search: postgres docs-assets ## job search as the jobs of 100 accounts grow to a million (about 25 minutes); report, plans and SVG plot in bench/results/
	$(GO) run ./bench -search

.PHONY: bench-go
bench-go: postgres docs-assets ## run the Go benchmarks against a throwaway PostgreSQL cluster
	$(GO) run ./internal/cmd/withpg $(GO) test -run '^$$' -bench . -benchmem ./...

.PHONY: tools
tools: ## build the pinned buf, protoc plugins, oapi-codegen, grpcurl and gotestsum into .bin (a few minutes the first time)
	scripts/install-tools.sh

.PHONY: grpcurl
grpcurl: ## install the pinned grpcurl into .bin, to call the gRPC API by hand (about a minute the first time)
	@scripts/install-tools.sh grpcurl

# What make test runs besides go: gotestsum, and the grpcurl TestGrpcurl
# calls, installed once into .bin rather than built by every test run.
.PHONY: test-tools
test-tools:
	@scripts/install-tools.sh grpcurl gotestsum

.PHONY: generate
# server/descriptors/jobboard.binpb: the gRPC package's descriptors with their comments, which
# gRPC reflection serves (protoc-gen-go's embedded copies carry none).
# proto/jobboard/rest/v2/http.yaml: the REST bindings, written from the rpcs'
# (jobboard.rest.v2.route) options (internal/cmd/httprules) before buf reads it.
# gen/openapi/jobboard.swagger.json: finished by internal/cmd/openapifinish,
# which applies the rules the generator cannot be told (its comment lists them);
# then converted to OpenAPI 3.0 (jobboard.openapi3.json), from which
# oapi-codegen makes gen/openapiclient (oapi-codegen.yaml).
generate: tools ## regenerate gen/ from proto/
	buf build --as-file-descriptor-set -o - | $(GO) run ./internal/cmd/httprules proto/jobboard/rest/v2/http.yaml
	buf generate
	$(GO) run ./internal/cmd/openapifinish gen/openapi/jobboard.swagger.json
	$(GO) run ./internal/cmd/openapiv3 gen/openapi/jobboard.swagger.json gen/openapi/jobboard.openapi3.json
	mkdir -p gen/openapiclient && oapi-codegen -config oapi-codegen.yaml -o gen/openapiclient/client.gen.go gen/openapi/jobboard.openapi3.json
	buf build --path proto/jobboard/v2 --as-file-descriptor-set -o server/descriptors/jobboard.binpb

.PHONY: generate-check
generate-check: tools ## fail when gen/ differs from what proto/ produces
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	buf build --as-file-descriptor-set -o - | $(GO) run ./internal/cmd/httprules "$$tmp/http.yaml" && \
	if ! cmp -s proto/jobboard/rest/v2/http.yaml "$$tmp/http.yaml"; then \
		diff -u proto/jobboard/rest/v2/http.yaml "$$tmp/http.yaml" | head -30; \
		echo "proto/jobboard/rest/v2/http.yaml is stale: run make generate and commit the result" >&2; exit 1; \
	fi && \
	buf generate -o "$$tmp" && \
	$(GO) run ./internal/cmd/openapifinish "$$tmp/gen/openapi/jobboard.swagger.json" && \
	$(GO) run ./internal/cmd/openapiv3 "$$tmp/gen/openapi/jobboard.swagger.json" "$$tmp/gen/openapi/jobboard.openapi3.json" && \
	mkdir -p "$$tmp/gen/openapiclient" && \
	oapi-codegen -config oapi-codegen.yaml -o "$$tmp/gen/openapiclient/client.gen.go" "$$tmp/gen/openapi/jobboard.openapi3.json" && \
	buf build --path proto/jobboard/v2 --as-file-descriptor-set -o "$$tmp/jobboard.binpb" && \
	if ! diff -r gen "$$tmp/gen" >/dev/null; then \
		diff -ru gen "$$tmp/gen" | head -50; \
		echo "gen/ is stale: run make generate and commit the result" >&2; exit 1; \
	fi && \
	if ! cmp -s server/descriptors/jobboard.binpb "$$tmp/jobboard.binpb"; then \
		echo "server/descriptors/jobboard.binpb is stale: run make generate and commit the result" >&2; exit 1; \
	fi && echo "gen/ matches proto/"

.PHONY: lint
lint: tools docs-assets ## buf lint, go vet and gofmt
	buf lint
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The image: a static binary on an empty base (nothing to pull), built from
# the folder .image/ that this target fills. IMAGE names it.
IMAGE_REPO ?= localhost/jobboard
IMAGE ?= $(IMAGE_REPO):latest
# podman's default runtime (crun) and its default RLIMIT_NOFILE fail on some
# container hosts; runc and deploy/image/containers.conf work there (docs/deploy.md).
PODMAN := CONTAINERS_CONF=$(CURDIR)/deploy/image/containers.conf podman --runtime runc

.PHONY: image
image: docs-assets podman ## build the container image (IMAGE, default localhost/jobboard:latest) with podman (static binary, CA bundle, non-root user)
	rm -rf .image && mkdir -p .image
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w $(BUILDINFO_LDFLAGS)' -o .image/jobboard ./cmd/jobboard
	cp /etc/ssl/certs/ca-certificates.crt deploy/image/passwd deploy/image/group .image/
	$(PODMAN) build --quiet -f deploy/image/Containerfile -t $(IMAGE) .image
	@$(PODMAN) image inspect --format '{{.Id}} {{.Size}} bytes' $(IMAGE) | sed 's/^/image $(subst /,\/,$(IMAGE)): /'
	@# Also tagged with its commit, so a deployment can name the build it runs and the one it rolls back to.
	@rev=$$(.image/jobboard version | sed -n 's/.*"revision":"\([0-9a-f]\{12\}\).*/\1/p'); \
	if [ -n "$$rev" ]; then $(PODMAN) tag $(IMAGE) $(IMAGE_REPO):$$rev && echo "also tagged $(IMAGE_REPO):$$rev"; fi

.PHONY: podman
podman: ## make sure podman and runc are installed, for make image and the topology
	@scripts/ensure-podman.sh

# The deployment topology on this machine (docs/deploy.md): PostgreSQL
# primary and hot standby, PgBouncer, three replicas of the image, HAProxy;
# all on 127.0.0.1, everything in .topology/.
TOPOLOGY = $(GO) run ./internal/cmd/topology -dir .topology -image $(IMAGE) -containers-conf deploy/image/containers.conf

.PHONY: topology-up
topology-up: image postgres pgbouncer topology-packages ## start the topology (HAProxy 18080/19090, 3 replicas, PgBouncer, primary and standby) from an empty database
	$(TOPOLOGY) up

.PHONY: topology-status
topology-status: ## describe each part of the topology: listening, healthy, primary or standby
	@$(TOPOLOGY) status

.PHONY: topology-replica
topology-replica: ## create or replace replica N of the running topology with its whole configuration and image, draining it first and waiting until HAProxy has it back (a rolling restart runs it for N=1, 2, 3)
	@$(TOPOLOGY) replica "$(N)"

.PHONY: topology-upgrade
topology-upgrade: ## upgrade the running topology to IMAGE (make image tags each build with its commit): its migrations first, then the replicas one at a time
	@$(TOPOLOGY) upgrade

# The upgrade scenario of make test-topology starts from the image of an
# earlier commit: UPGRADE_FROM, the last before migration 0038 (0038 to
# 0047 since), so the upgrade crosses changes of schema.
UPGRADE_FROM ?= 12a9a44
UPGRADE_FROM_IMAGE = $(IMAGE_REPO):upgrade-from-$(UPGRADE_FROM)

.PHONY: upgrade-from-image
upgrade-from-image: podman
	@scripts/image-at.sh $(UPGRADE_FROM) $(UPGRADE_FROM_IMAGE)

.PHONY: topology-failover
topology-failover: ## the primary is lost: fence it, promote the standby, repoint PgBouncer (docs/operations.md, "Procedures")
	@$(TOPOLOGY) failover

.PHONY: topology-new-standby
topology-new-standby: ## make the cluster that is not the primary a new standby of it (a fresh copy), and move the replicas' reads to it
	@$(TOPOLOGY) new-standby

.PHONY: topology-switchover
topology-switchover: ## hand the primary's role to the standby without losing a write, the old primary becoming the standby (run again: the failback)
	@$(TOPOLOGY) switchover

.PHONY: topology-backup
topology-backup: ## back up the primary with pgBackRest: incremental, or full with FULL=1 (two full backups kept); run it from cron
	@$(TOPOLOGY) backup $(if $(filter 1,$(FULL)),full,incremental)

.PHONY: topology-restore
topology-restore: ## restore the backups and archived WAL to TARGET (a time, "2026-12-05 13:42:05+00") into a cluster of its own on 127.0.0.1:15434
	@$(TOPOLOGY) restore "$(TARGET)"

.PHONY: topology-rotate-internal-token
topology-rotate-internal-token: ## start a rotation of the internal token: a new one in .topology/internal-token, the old one still accepted, the replicas replaced
	@$(TOPOLOGY) rotate-internal-token

.PHONY: topology-retire-internal-token
topology-retire-internal-token: ## end the rotation once the board's services call with the new token: the old one refused, the replicas replaced
	@$(TOPOLOGY) retire-internal-token

.PHONY: topology-rotate-logs
topology-rotate-logs: ## rotate the topology's logs over 50 MB, keeping five of each (logrotate; run it from cron)
	@$(TOPOLOGY) rotate-logs

.PHONY: topology-account
topology-account: ## create an account on the running topology: make topology-account NAME="Acme Freight" prints its id, API key and webhook secret
	@$(TOPOLOGY) account "$(NAME)"

.PHONY: topology-trace
topology-trace: ## print trace TRACE (its trace_id, as the access log names it) from the topology's Jaeger: each span under its parent, with its time and replica
	@$(TOPOLOGY) trace $(TRACE)

.PHONY: topology-down
topology-down: ## stop every part of the topology (its logs stay in .topology/ until the next topology-up)
	$(TOPOLOGY) down

# The scenarios on the topology (docs/deploy.md quotes their "figures:"
# lines): steady load, rolling restart, kill -9, PgBouncer restart, the
# primary lost. They bring the topology up from an empty database (down
# first when it runs) and stop it at the end.
.PHONY: test-topology
test-topology: image upgrade-from-image postgres pgbouncer topology-packages ## run the load and fault scenarios and the procedures on the topology (about 8 minutes after the images; it ends down)
	JOBBOARD_TEST_TOPOLOGY=1 JOBBOARD_IMAGE=$(IMAGE) JOBBOARD_UPGRADE_FROM_IMAGE=$(UPGRADE_FROM_IMAGE) $(GO) test -count=1 -v -timeout 45m -run '^TestTopology$$' ./internal/topology/

.PHONY: topology-packages
topology-packages: jaeger
	@scripts/ensure-debian-packages.sh haproxy:haproxy promtool:prometheus logrotate:logrotate pgbackrest:pgbackrest \
		prometheus-postgres-exporter:prometheus-postgres-exporter

.PHONY: jaeger
jaeger: ## build the pinned Jaeger (tools/jaeger) into .bin, for the topology's traces (several minutes the first time)
	@scripts/install-tools.sh jaeger

.PHONY: prometheus
prometheus: ## make sure Prometheus and promtool (Debian's prometheus) are installed for the alert rules' tests
	@scripts/ensure-debian-packages.sh promtool:prometheus

.PHONY: postgres
postgres: ## make sure the PostgreSQL server binaries are installed
	@scripts/ensure-postgres.sh

.PHONY: pgbouncer
pgbouncer: ## make sure PgBouncer is installed for the tests that run the service behind it in transaction mode
	@scripts/ensure-pgbouncer.sh

# The load generator of the benchmarks: h2load, a C client from Debian's
# nghttp2-client, so the load takes little of the cores the server is measured on.
.PHONY: loadgen
loadgen: ## make sure h2load (Debian's nghttp2-client) and wrk are installed for the benchmarks
	@scripts/ensure-debian-packages.sh h2load:nghttp2-client wrk:wrk

.PHONY: chromium
chromium: ## make sure Chromium is installed for the browser test of /docs
	@scripts/ensure-chromium.sh
