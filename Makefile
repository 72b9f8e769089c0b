# openvitals: `make run` starts the whole service locally (`make demo` with a demo website in
# it), `make test` runs every test, `make deploy` deploys it to AWS. Each installs what it needs first (idempotently): Debian
# packages, Chromium and the browser layer (layers/browser/install.sh), the pinned npm packages
# under layers/, Go modules, and for `make test`, `make synth` and `make deploy` the CDK app's
# Go modules and the CDK CLI (infra/).

SHELL := /bin/bash
.DEFAULT_GOAL := help

STANDINS   := layers/standins/standins.sh
RUN_PORTS  := $(or $(OPENVITALS_DYNAMODB_PORT),8000) $(or $(OPENVITALS_SQS_PORT),9324)
# The tests use their own ports, so that they can run beside `make run`.
TEST_PORTS := 18000 19324

# The SDK finds the stand-ins through its own variables; no code has test hooks.
LOCAL_AWS = AWS_REGION=$${AWS_REGION:-us-east-1} AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
	AWS_EC2_METADATA_DISABLED=true \
	AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:$(word 1,$(1)) \
	AWS_ENDPOINT_URL_SQS=http://127.0.0.1:$(word 2,$(1))

export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20

# Every target; make help says what each does (make test checks both for every rule here).
TARGETS := help deps deps-local deps-deploy run demo reset key daily keys test test-infra rehearse image-test fuzz \
	bench bench-pages bench-audit bench-multistep bench-notify bench-regressions bench-dashboard bench-rum bench-reads bench-fanout bench-capacity \
	screenshots build synth bootstrap deploy clean
.PHONY: $(TARGETS)

# The functions deployed to AWS are the directories under functions/ (the local programs live
# under cmd/): each is built into dist/<function>/bootstrap, which infra/ packages (zip, or the
# browser image for the workers).
LAMBDA_FUNCTIONS := $(sort $(patsubst functions/%/main.go,%,$(wildcard functions/*/main.go)))
# Every function runs on Graviton (arm64). lambda.norpc leaves out aws-lambda-go's net/rpc
# entry point, which only the retired go1.x runtime used. internal/testing/lambdatest builds the
# functions the tests start with the same flags, for the build machine's architecture.
LAMBDA_GOENV   := GOOS=linux GOARCH=arm64 CGO_ENABLED=0
LAMBDA_GOFLAGS := -tags lambda.norpc -trimpath -ldflags='-s -w'

# The CDK CLI pinned in infra/package.json, installed under .run/cdk: node_modules inside
# infra/ would put the CLI's Go init templates into infra's `go test ./...`. It runs on the
# browser layer's Node 22 (Node 20 is past its end of life for the CLI and jsii), and cdk.json
# runs the Go app (infra/cdk-app.sh), whose jsii runtime JSII_NODE points at the same Node.
# Where the browser layer has no Node for the host (macOS: npm installs only the
# node-linux-* builds there), the CLI runs on the machine's own Node (20 or later).
NODE22   := layers/browser/node_modules/.bin/node
CDK_NODE  = $(if $(wildcard $(NODE22)),$(abspath $(NODE22)),$(shell command -v node))
CDK       = JSII_NODE=$(CDK_NODE) $(CDK_NODE) .run/cdk/node_modules/aws-cdk/bin/cdk

help:
	@echo "make help   this list"
	@echo "make run    install what is missing, start the stand-ins and serve the API on OPENVITALS_ADDR"
	@echo "make demo   make run with a demo website in it (a shop served on OPENVITALS_DEMO_ADDR, visited and audited for real: ~4-5 min the first time); prints the dashboard's URL and a key"
	@echo "make reset  delete make run's data under .run/data (websites, keys, results), to start over; make reset DEMO=1 deletes make demo's instead"
	@echo "make key    print the admin key of the account local of the make run or make demo going (else of the last one)"
	@echo "make daily  start today's fan-out of the audits, multistep runs and field-data collections now and follow what it queues (with make run going)"
	@echo "make keys ACCOUNT=acme ROLE=admin   create an API key in the table the environment points at"
	@echo "make test   install what is missing, start the stand-ins, run every test and every benchmark once (small), stop them"
	@echo "make test-infra  the CDK app's tests alone (make test runs them)"
	@echo "make fuzz   fuzz every API request body and the beacon parser (FUZZTIME per target, default 100s: ~5 min)"
	@echo "make bench  API latency and allocation benchmarks, and a function's cold start"
	@echo "make bench-pages  pages list, website opportunities and page detail at 1,000 and 10,000 pages with 30 days of results (~10 min)"
	@echo "make bench-audit  lab audit benchmarks: throughput, runner vs Lighthouse CLI, stability, applied vs simulated throttling (~40 min)"
	@echo "make bench-multistep  multistep runs: seconds a run, runs per hour per worker, a run's peak memory (~1 min)"
	@echo "make bench-notify notifications: state change to webhook request (p50, p99) and notifier throughput (~3 min)"
	@echo "make bench-regressions regression detection against labelled series and two baselines; daily series: TCPD, generated field series; run-to-run noise of real audits (~10 min)"
	@echo "make bench-dashboard dashboard: first render with 100 pages, and its own Lighthouse audit (~8 min)"
	@echo "make bench-rum    RUM benchmarks: fold and collect throughput, sketch error, reports over 10M views, what a view costs (~12 min)"
	@echo "make bench-reads  what an audit reads once its result is stored, at 10, 100 and 1,000 pages (~1 min)"
	@echo "make bench-capacity the capacity model at 3 sizes: fan-out time, DynamoDB units a second (all, busiest partition), the month's bill item by item, quotas (~12 min)"
	@echo "make bench-fanout the daily fan-out: scheduler, a page of the websites listing, a website's share at 1, 200 and 1,000 pages, with their AWS requests (~2 min)"
	@echo "make screenshots  the dashboard's screenshots in docs/screenshots, made by its browser test (~3 min)"
	@echo "make deps-local   install what make run needs (every target installs what it needs itself)"
	@echo "make deps   deps-local, and the CDK app's modules and CLI (make test, synth and deploy need them)"
	@echo "make deps-deploy  what make synth and make deploy need on any machine: the Go modules and the CDK CLI"
	@echo "make build  Linux arm64 bootstraps of every Lambda function under dist/<function>/"
	@echo "make synth  synthesize the CloudFormation template offline (infra/cdk.out)"
	@echo "make rehearse  synthesize, lint, and deploy the stack into a local AWS emulator (moto), then check it against the code (~1 min)"
	@echo "make bootstrap  cdk bootstrap, once per AWS account and region (credentials needed)"
	@echo "make deploy build and deploy the stack to AWS (credentials, cdk bootstrap and Docker needed; see docs/deployment.md);"
	@echo "            APPROVAL=never deploys without asking (no terminal needed, e.g. CI)"
	@echo "make image-test  build the browser image with Docker and audit a page with it under a fake Lambda Runtime API"
	@echo "make clean  delete what the targets installed and built (.run, dist, the stand-ins' packages, infra/cdk.out)"

# ---- installation -------------------------------------------------------------------------
# deps-local is what running the service needs; deps adds the CDK app and its CLI, which
# `make test`, `make synth` and `make deploy` need (after it, `make synth` works offline).
deps-local: .run/apt.stamp layers/standins/node_modules/.stamp layers/browser/node_modules/.stamp \
	layers/rum/node_modules/.stamp layers/web/node_modules/.stamp layers/spa/node_modules/.stamp .run/gomod.stamp
deps: deps-local .run/infra-gomod.stamp .run/cdk/node_modules/.stamp
# deps-deploy is what `make synth` and `make deploy` need on any machine with Go and npm
# (and Docker for the deploy; macOS too):
# the Go modules and the CDK CLI. Chromium, Node 22 and Lighthouse come from the browser
# image's own build (layers/browser/Dockerfile), not from the host.
deps-deploy: .run/gomod.stamp .run/infra-gomod.stamp .run/cdk/node_modules/.stamp

.run/apt.stamp: Makefile
	@mkdir -p .run
	@missing=""; \
	command -v java >/dev/null && java -version 2>&1 | grep -q '"17\.' || missing="$$missing openjdk-17-jre-headless"; \
	command -v node >/dev/null || missing="$$missing nodejs"; \
	command -v npm >/dev/null || missing="$$missing npm"; \
	command -v curl >/dev/null || missing="$$missing curl"; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo apt-get update && $$sudo apt-get install -y --no-install-recommends $$missing; \
	fi
	@touch $@

layers/standins/node_modules/.stamp: layers/standins/package.json layers/standins/package-lock.json
	cd layers/standins && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# Chromium, fonts, Node 22, Lighthouse and html-validate for the browser workers (Lighthouse
# 13.5 needs Node 22), by the same script that builds their Lambda image.
layers/browser/node_modules/.stamp: layers/browser/install.sh layers/browser/package.json layers/browser/package-lock.json
	layers/browser/install.sh packages npm check
	@touch $@

# web-vitals, the RUM snippet's source.
layers/rum/node_modules/.stamp: layers/rum/package.json layers/rum/package-lock.json
	cd layers/rum && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# navigo, the client-side router of the single-page app the real-user tests load in Chromium.
layers/spa/node_modules/.stamp: layers/spa/package.json layers/spa/package-lock.json
	cd layers/spa && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# uPlot, the dashboard's charts.
layers/web/node_modules/.stamp: layers/web/package.json layers/web/package-lock.json
	cd layers/web && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

.run/gomod.stamp: go.mod go.sum
	@mkdir -p .run
	go mod download
	@touch $@

# The CDK app's own module (aws-cdk-go is ~430 MB): kept out of the main module.
.run/infra-gomod.stamp: infra/go.mod infra/go.sum
	@mkdir -p .run
	cd infra && go mod download
	@touch $@

.run/cdk/node_modules/.stamp: infra/package.json infra/package-lock.json
	@mkdir -p .run/cdk
	cp infra/package.json infra/package-lock.json .run/cdk/
	cd .run/cdk && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# ---- running ------------------------------------------------------------------------------
# make run keeps its data (DynamoDB Local's tables, the S3 stand-in's objects) in DATA_DIR, so
# that a restart keeps websites, keys and results; make demo keeps its own in DEMO_DATA_DIR,
# inside it. make reset deletes make run's and keeps the demo's (minutes to make again),
# make reset DEMO=1 the demo's alone.
DATA_DIR := $(or $(OPENVITALS_DATA_DIR),.run/data)
DEMO_DATA_DIR := $(DATA_DIR)/demo
# A run holds this lock (fd 9: its shell and the service) until it has stopped everything it
# started: a run started right after Ctrl-C waits for the previous one to finish stopping
# instead of racing it for the ports. The lock file names the run's data directory, where
# make key finds the key. The stand-ins are the shell's own (STANDINS_OWNER: PID
# files of their own, and a later start stops them if the shell is gone without stopping them).
RUN_LOCK = .run/run-$(word 1,$(RUN_PORTS)).lock

# serve_local(data directory, more variables): the stand-ins over the data directory and the
# local service (cmd/local) until Ctrl-C, for make run and make demo.
define serve_local
@set -e; mkdir -p .run; exec 9>>$(RUN_LOCK); \
flock -n 9 || { echo "waiting for the previous make run on these ports to stop..."; flock -w 60 9 || { echo "another make run still holds the ports $(RUN_PORTS)" >&2; exit 1; }; }; \
echo "$(1)" >$(RUN_LOCK); \
export STANDINS_OWNER=$$$$; trap '$(STANDINS) stop $(RUN_PORTS)' EXIT; \
STANDINS_DB_PATH=$(1)/dynamodb $(STANDINS) start $(RUN_PORTS) 9>&-; \
go build -o .run/bin/openvitals-local ./cmd/local; \
$(call LOCAL_AWS,$(RUN_PORTS)) OPENVITALS_DATA_DIR=$(1) $(2) .run/bin/openvitals-local
endef

run: deps-local
	$(call serve_local,$(DATA_DIR))

# The demo: make run over its own data with a website already in it (internal/local/demo.go),
# seeded at the first start and found at the next ones.
demo: deps-local
	$(call serve_local,$(DEMO_DATA_DIR),OPENVITALS_DEMO=1)

reset:
	@mkdir -p .run; exec 9>>$(RUN_LOCK); flock -n 9 || { echo "stop make run first (Ctrl-C)" >&2; exit 1; }; \
	if [ -n "$(DEMO)" ]; then \
		rm -rf $(DEMO_DATA_DIR); echo "deleted $(DEMO_DATA_DIR): the next make demo seeds the demo again, with a new key"; \
	else \
		[ ! -d $(DATA_DIR) ] || find $(DATA_DIR) -mindepth 1 -maxdepth 1 ! -path $(DEMO_DATA_DIR) -exec rm -rf {} +; \
		echo "deleted make run's data in $(DATA_DIR) (make demo's in $(DEMO_DATA_DIR) stays: make reset DEMO=1): the next make run starts empty, with a new key"; \
	fi

# The key of the run going, or of the last one: its data directory is in the lock file.
key:
	@dir=$$(cat $(RUN_LOCK) 2>/dev/null); cat "$${dir:-$(DATA_DIR)}/local-admin-key"

# Queue today's audits now through the scheduler's handler and follow them (needs make run).
daily: deps-local
	@$(call LOCAL_AWS,$(RUN_PORTS)) go run ./cmd/daily

keys: deps-local
	@$(call LOCAL_AWS,$(RUN_PORTS)) go run ./cmd/keys create -account "$(or $(ACCOUNT),local)" -role "$(or $(ROLE),admin)" -name "$(NAME)"

# ---- testing ------------------------------------------------------------------------------
# Every package with a benchmark. make test runs each benchmark once, small (-short: each picks
# its small sizes, one audit at most of those with Lighthouse; ~3 min in all), so that a
# benchmark that no longer runs fails the tests; the bench targets keep their full sizes.
BENCH_PKGS := $(addprefix ./,$(sort $(dir $(shell grep -rl --include='*_test.go' '^func Benchmark' cmd functions internal))))

test: deps
	@for t in $$(grep -oE '^[a-z][a-z-]*:' $(firstword $(MAKEFILE_LIST)) | tr -d :); do \
		case " $(TARGETS) " in *" $$t "*) ;; *) echo "make $$t is not in TARGETS" >&2; exit 1;; esac; \
		grep -qE "^[[:space:]]+@echo \"make $$t[ \"]" $(firstword $(MAKEFILE_LIST)) || { echo "make help does not say what make $$t does" >&2; exit 1; }; \
	done
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -p 1 -count=1 ./...; \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -p 1 -short -run '^$$' -bench . -benchtime 1x $(BENCH_PKGS); \
	$(MAKE) --no-print-directory test-infra; \
	$(MAKE) --no-print-directory rehearse; \
	scripts/local-restart-test.sh; \
	scripts/readme-walkthrough.sh

test-infra:
	cd infra && go test -count=1 ./...

# The deployment rehearsal (scripts/rehearse.sh): cfn-lint on the template, then cdk bootstrap
# and cdk deploy into moto_server on a free port, and internal/rehearsal's checks of what was
# deployed against what the code needs. No AWS account, no Docker.
rehearse: synth
	CDK_NODE=$(CDK_NODE) scripts/rehearse.sh

# The browser image, built with Docker as `cdk deploy` builds it, then the audit worker run
# from it under a fake Lambda Runtime API, auditing a page (scripts/image-test.sh). Not part of
# `make test`: it needs a Docker engine (and, on x86_64, arm64 emulation).
image-test: deps-local build
	scripts/image-test.sh docker

# Native Go fuzzing beyond the seed corpora (testdata/fuzz, which `make test` runs): no input
# may answer 500 or panic, and a refused body must change nothing. One worker, as the request
# fuzzer compares the table's item count around each request.
FUZZ_TARGETS := FuzzRequestBodies:./internal/api/ FuzzCreatePages:./internal/api/ FuzzParseBeacon:./internal/rum/ FuzzWireBatch:./internal/rum/
fuzz: deps-local
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	for t in $(FUZZ_TARGETS); do \
		$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -fuzz "^$${t%%:*}$$" -fuzztime $(or $(FUZZTIME),100s) -fuzzminimizetime 20x -parallel 1 "$${t#*:}"; \
	done

bench: deps-local
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench . -benchmem -benchtime 300x ./internal/api/ ./functions/...

# The pages list and page detail at scale (seeding 60,000 lab results takes minutes).
bench-pages: deps-local
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) OPENVITALS_BENCH_PAGES=1 go test -run '^$$' -bench PagesAtScale -benchtime 100x -timeout 60m ./internal/api/

# Lab audits: throughput, warm runner against the Lighthouse CLI, stability, and the measurement
# methods' cost and noise on the demo shop's and the fixture's pages (~40 min, real Chromium and
# Lighthouse; run nothing else CPU-heavy meanwhile). See BENCHMARKS.md.
bench-audit: deps-local
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench Audit -benchtime 1x -timeout 120m ./internal/auditworker/

# Multistep runs: runs per hour per worker and peak memory of a run (real Chromium). See BENCHMARKS.md.
bench-multistep: deps-local
	go test -run '^$$' -bench JourneyRun -benchtime 1x ./internal/multistepworker/

# Notifications: from a state change to its webhook request (p50, p99), and one notifier's
# throughput (~3 min, SQS stand-in and a receiver on loopback). See BENCHMARKS.md.
bench-notify: deps-local
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench ChangeToWebhook -benchtime 100x ./internal/notifyworker/; \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench NotifierThroughput -benchtime 3x ./internal/notifyworker/

# Regression detection: the detector and two baselines on labelled series (CPU only, ~1 min),
# then the run-to-run spread of real Lighthouse runs the series are shaped on (~8 min). See
# BENCHMARKS.md.
bench-regressions: deps-local
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	go test -run '^$$' -bench 'Evaluation|TCPD|UXShaped|RUMShaped' -benchtime 1x -timeout 20m ./internal/regression/; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench RunSpread -benchtime 1x -timeout 30m ./internal/auditworker/

# The dashboard: first render of the website view with 100 pages, measured in Chromium, then
# openvitals' own lab pipeline auditing the dashboard's views over the demo website (~8 min,
# real Chromium and Lighthouse). See BENCHMARKS.md.
bench-dashboard: deps-local
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench 'Dashboard' -benchtime 1x -timeout 40m ./internal/web/dashboardtest/

# The dashboard's screenshots (docs/screenshots, shown in docs/dashboard.md), made by its browser test.
screenshots: deps-local
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) OPENVITALS_SCREENSHOTS=$(CURDIR)/docs/screenshots go test -count=1 -run '^TestDashboard(RealUsers|SoftNavigations|JourneyRoutes|Incidents|Profiles|Compare|Opportunities)?$$' -timeout 20m ./internal/web/dashboardtest/

# Real-user monitoring: fold throughput on one core, the sketches' p75 error, collect throughput
# and report latency over 10 million page views in DynamoDB Local (~5 min). See BENCHMARKS.md.
bench-rum: deps-local
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench 'Fold|SketchP75' -benchtime 4000x -cpu 1 ./internal/rumworker/ ./internal/rollup/; \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench 'Collect' -benchtime 3000x ./internal/api/; \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench 'Report10M|Aggregate' -benchtime 30x -timeout 30m ./internal/rumworker/
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench 'RUMCost' -benchtime 1x -timeout 60m ./internal/rumworker/

# What an audit reads in DynamoDB once its result is stored (its page's summary, the budgets'
# statuses, its page's regressions) in websites of 10, 100 and 1,000 pages (~1 min, DynamoDB
# Local). See BENCHMARKS.md.
bench-reads: deps-local
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench FollowUpReads -benchtime 20x ./internal/auditworker/

# The daily fan-out: the scheduler, a page of the websites listing, and a website's share of the
# audits at 1, 200 and 1,000 pages, each with its DynamoDB and SQS requests (~2 min). See
# BENCHMARKS.md.
bench-fanout: deps-local
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench DailyFanout -benchtime 3x -timeout 30m ./internal/fanoutworker/

# The capacity model at its three sizes: a month of real users at several traffics
# (BenchmarkRUMCost, written to internal/capacity/testdata/rum.json), then the units of work of
# the fan-out and of real audits measured on the stand-ins and composed per size (~12 min).
# See BENCHMARKS.md and docs/operations.md.
bench-capacity: deps-local
	@set -e; trap '$(STANDINS) stop $(TEST_PORTS)' EXIT; \
	$(STANDINS) start $(TEST_PORTS); \
	$(call LOCAL_AWS,$(TEST_PORTS)) OPENVITALS_RUM_COST_FILE=$(CURDIR)/internal/capacity/testdata/rum.json \
		go test -run '^$$' -bench RUMCost -benchtime 1x -timeout 60m ./internal/rumworker/; \
	$(call LOCAL_AWS,$(TEST_PORTS)) go test -run '^$$' -bench Capacity -benchtime 1x -timeout 30m ./internal/capacity/

# Each function's bootstrap, for Lambda's provided.al2023 runtime on arm64.
build:
	@mkdir -p dist
	@set -e; for f in $(LAMBDA_FUNCTIONS); do \
		echo "dist/$$f/bootstrap"; \
		$(LAMBDA_GOENV) go build $(LAMBDA_GOFLAGS) -o dist/$$f/bootstrap ./functions/$$f; \
	done

# ---- AWS ----------------------------------------------------------------------------------
# CDK_ARGS passes settings through, e.g. make deploy CDK_ARGS='-c dailyHourUtc=5'.
# --no-notices: the CLI would otherwise fetch notices from the network.
synth: deps-deploy build
	$(CDK) synth -q --no-notices $(CDK_ARGS)
	@echo "template: infra/cdk.out/OpenvitalsStack.template.json"

# CDK's bootstrap stack (its bucket, image repository and deploy roles), once per account and
# region: those of the AWS credentials in the environment.
bootstrap: deps-deploy build
	$(CDK) bootstrap --no-notices $(CDK_ARGS)

# Needs AWS credentials, `cdk bootstrap` once per account and region, and Docker (BuildKit)
# able to build linux/arm64 images. Docker's default provenance attestations turn the image
# into a manifest list, which Lambda refuses: leave them out. APPROVAL=never (or
# any-change, broadening) is passed as --require-approval: without a terminal to answer the
# CLI's question about new permissions, say never.
deploy: deps-deploy build
	BUILDX_NO_DEFAULT_ATTESTATIONS=1 $(CDK) deploy --no-notices $(if $(APPROVAL),--require-approval $(APPROVAL)) $(CDK_ARGS)

clean:
	rm -rf .run dist layers/standins/node_modules infra/cdk.out
