# openvitals: `make run` starts the whole service locally, `make test` runs every test.
# Both install what they need first (idempotently): Debian packages, the pinned npm packages of
# the local stand-ins under layers/localstack, and Go modules.

SHELL := /bin/bash
.DEFAULT_GOAL := help

STANDINS   := layers/localstack/standins.sh
RUN_PORTS  := $(or $(OPENVITALS_DYNAMODB_PORT),8000) $(or $(OPENVITALS_SQS_PORT),9324)
# The tests use their own ports, so that they can run beside `make run`.
TEST_PORTS := 18000 19324

# The SDK finds the stand-ins through its own variables; no code has test hooks.
LOCAL_AWS = AWS_REGION=$${AWS_REGION:-us-east-1} AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
	AWS_EC2_METADATA_DISABLED=true \
	AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:$(word 1,$(1)) \
	AWS_ENDPOINT_URL_SQS=http://127.0.0.1:$(word 2,$(1))

export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20

.PHONY: help deps run daily test test-infra bench bench-audit bench-multistep build keys clean

help:
	@echo "make run    install what is missing, start the stand-ins and serve the API on OPENVITALS_ADDR"
	@echo "make test   install what is missing, start the stand-ins, run every test, stop them"
	@echo "make daily  queue today's audits of every page now and follow them (with make run going)"
	@echo "make bench  API latency and allocation benchmarks, and a function's cold start"
	@echo "make bench-audit  lab audit benchmarks: throughput, runner vs Lighthouse CLI, stability (~15 min)"
	@echo "make keys ACCOUNT=acme ROLE=admin   create an API key in the table the environment points at"

# ---- installation -------------------------------------------------------------------------
deps: .run/apt.stamp layers/localstack/node_modules/.stamp layers/browser/node_modules/.stamp .run/gomod.stamp

.run/apt.stamp: Makefile
	@mkdir -p .run
	@missing=""; \
	command -v java >/dev/null && java -version 2>&1 | grep -q '"17\.' || missing="$$missing openjdk-17-jre-headless"; \
	command -v node >/dev/null || missing="$$missing nodejs"; \
	command -v npm >/dev/null || missing="$$missing npm"; \
	command -v curl >/dev/null || missing="$$missing curl"; \
	[ -x /usr/lib/chromium/chromium ] || command -v chromium >/dev/null || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update && $$sudo apt-get install -y --no-install-recommends $$missing; \
	fi
	@touch $@

layers/localstack/node_modules/.stamp: layers/localstack/package.json layers/localstack/package-lock.json
	cd layers/localstack && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# Node 22, Lighthouse and html-validate for the audit worker (Lighthouse 13.5 needs Node 22).
layers/browser/node_modules/.stamp: layers/browser/package.json layers/browser/package-lock.json
	cd layers/browser && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

.run/gomod.stamp: go.mod go.sum
	@mkdir -p .run
	go mod download
	@touch $@

# ---- running ------------------------------------------------------------------------------
run: deps
	@set -e; trap '$(STANDINS) stop $(RUN_PORTS)' EXIT; \
	$(STANDINS) start $(RUN_PORTS); \
	go build -o .run/bin/openvitals-local ./functions/local; \
	$(call LOCAL_AWS,$(RUN_PORTS)) .run/bin/openvitals-local

# Queue today's audits now through the scheduler's handler and follow them (needs make run).
daily: deps
	@$(call LOCAL_AWS,$(RUN_PORTS)) go run ./functions/daily

keys: deps
	@$(call LOCAL_AWS,$(RUN_PORTS)) go run ./functions/keys create -account "$(or $(ACCOUNT),local)" -role "$(or $(ROLE),admin)" -name "$(NAME)"

# ---- testing ------------------------------------------------------------------------------
test: deps
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -p 1 -count=1 ./...; \
	$(MAKE) --no-print-directory test-infra

test-infra:
	cd infra && go test -count=1 ./...

bench: deps
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench . -benchmem -benchtime 300x ./internal/api/ ./functions/...

# Lab audits: throughput, warm runner against the Lighthouse CLI, stability (~15 min, real
# Chromium and Lighthouse; run nothing else CPU-heavy meanwhile). See BENCHMARKS.md.
bench-audit: deps
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench Audit -benchtime 1x -timeout 45m ./internal/auditworker/

# Multistep runs: runs per hour per worker and peak memory of a run (real Chromium). See BENCHMARKS.md.
bench-multistep: deps
	go test -run '^$$' -bench JourneyRun -benchtime 1x ./internal/runworker/

build:
	@mkdir -p .run/bin
	for f in websites pages budgets multistep lab scheduler audit-worker multistep-worker purge-worker; do \
		CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -trimpath -ldflags='-s -w' -o .run/bin/$$f/bootstrap ./functions/$$f; \
	done

clean:
	rm -rf .run layers/localstack/node_modules infra/cdk.out
