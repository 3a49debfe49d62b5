# tunecon's one Makefile: CI runs `make test`, newcomers run `make demo`.
SHELL := /bin/bash
GO ?= go
BIN := bin
PROBLEM ?= blog
APT_PACKAGES_PERF := wrk

.PHONY: help build test test-go test-kit test-problems test-exhaustive slowest test-webapps demo perf portal-perf headroom stability steadiness scores new-problem lint deps deps-rust deps-system apps \
	dist deploy-venv deploy-boot deploy-test test-deploy

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

deps: ## download the Go modules, and the Rust apps' crates if cargo is there
	@$(GO) mod download
	@for d in $(GO_APPS); do (cd $$d && $(GO) mod download) || exit 1; done
	@$(MAKE) --no-print-directory deps-rust

# Every problem's Rust apps: each a Cargo package with its own Cargo.lock.
RUST_APPS = $(wildcard problems/*/webapp/rust)
# The oldest cargo that builds them is 1.$(MIN_CARGO_MINOR) (launch.MinCargoMinor).
MIN_CARGO_MINOR := 89

# rustup is no Debian package and Debian 12's cargo (1.63) is too old for axum
# and sqlx, so this installs nothing: it looks for cargo where rustup puts it
# too, and without it says what the machine must have. Then the Rust apps'
# tests skip, or fail under CI=true, as the tests of a missing server do.
deps-rust:
	@for c in $$(command -v cargo) $${CARGO_HOME:-$$HOME/.cargo}/bin/cargo; do \
		v=$$($$c --version 2>/dev/null | sed -n 's/^cargo 1\.\([0-9]*\)\..*/\1/p'); \
		if [ -n "$$v" ] && [ "$$v" -ge $(MIN_CARGO_MINOR) ]; then \
			for d in $(RUST_APPS); do (cd $$d && $$c fetch --locked -q) || exit 1; done; exit 0; \
		fi; \
		[ -n "$$v" ] && found="$$found cargo 1.$$v ($$c)"; \
	done; \
	echo "the Rust apps need cargo >= 1.$(MIN_CARGO_MINOR), installed with rustup (https://rustup.rs);$${found:- no cargo} found (Debian's cargo, 1.63, is too old)"; \
	if [ "$$CI" = true ]; then echo "CI=true: the Rust apps' tests cannot run" >&2; exit 1; fi; \
	echo "their tests will skip"

# Every problem's apps, built as tunecon serve builds them (tools/apps)
# before the tests: a Rust app's first build compiles the crates, minutes on
# two cores, and no test should wait on a compiler or share the machine
# with one.
apps: deps ## build every problem's apps, in every language
	$(GO) run ./tools/apps

# -trimpath keeps the checkout's path out of the build, so that a fresh clone
# reuses what the Go build cache holds from another; go build downloads only
# the modules it needs.
build: ## build bin/tunecon
	$(GO) build -trimpath -o $(BIN)/tunecon ./cmd/tunecon

# Packages of the real servers some tests use; as another user those tests skip.
deps-system: ## as root: apt-get install MariaDB, PostgreSQL, nginx, Chromium and python3-venv if missing
	@missing=""; \
	{ command -v mariadbd || test -x /usr/sbin/mariadbd; } >/dev/null || missing="$$missing mariadb-server"; \
	{ ls /usr/lib/postgresql/*/bin/postgres || command -v postgres; } >/dev/null 2>&1 || missing="$$missing postgresql"; \
	{ command -v nginx || test -x /usr/sbin/nginx; } >/dev/null || missing="$$missing nginx"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	python3 -c 'import venv, ensurepip' 2>/dev/null || missing="$$missing python3-venv"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then echo "not root: tests that need$$missing will skip"; exit 0; fi; \
	echo "installing$$missing (apt-get)"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null

# The suite in two steps. First every problem's apps build (tools/apps, as
# make apps, at a lower priority, its output in build/apps.log), and then the
# Go apps' own modules test (test-webapps, build/webapps.log), while the
# checks and the tests that start no app run beside them: a Rust app's first
# build takes minutes of both cores, and the kit's packages (engine, portal,
# command, kit, tools) and the problems' data, services and keys load no
# reference app for long. Then the packages that start the problems' apps,
# one at a time and with the machine to themselves: their timed
# runs against reference apps are what sharing it breaks (at -p 2, bank's
# Python /report and dashboard's Python final check timed out).
test: deps deps-system ## the whole test suite (what CI runs)
	@mkdir -p build; rm -f build/test-go-*.json build/apps.status
	@echo "building every problem's apps, then testing the Go apps' own modules, beside the checks and the kit's tests (output in build/apps.log, build/webapps.log)"; \
	(nice -n 10 $(GO) run ./tools/apps >build/apps.log 2>&1; echo $$? >build/apps.status; \
	 nice -n 10 $(MAKE) --no-print-directory test-webapps >build/webapps.log 2>&1) & beside=$$!; \
	$(MAKE) --no-print-directory lint test-deploy test-kit; checks=$$?; \
	wait $$beside; webapps=$$?; built=$$(cat build/apps.status); cat build/webapps.log; \
	grep -E '^[a-z]+ [a-z]+: (built|not built)' build/apps.log; \
	if [ "$$built" != 0 ]; then cat build/apps.log; echo "make test: building the apps failed (above)"; exit 1; fi; \
	$(MAKE) --no-print-directory test-problems; problems=$$?; \
	$(MAKE) --no-print-directory test-exhaustive; exhaustive=$$?; \
	$(MAKE) --no-print-directory slowest; \
	[ $$checks = 0 ] && [ $$webapps = 0 ] && [ $$problems = 0 ] && [ $$exhaustive = 0 ]

# gotestsum prints each package's result and each failure's output, keeps
# every test's events in build/test-go-*.json, and slowest lists the tests
# that took 20 s or more, slowest first: what to make faster when the suite
# nears its 40 minutes.
GOTEST = $(GO) tool gotestsum --format pkgname-and-test-fails
GOTEST_FLAGS = -race -p 1 -count=1 -timeout 25m

test-go: test-kit apps test-problems test-exhaustive slowest ## every Go test: the kit's packages, then the problems' (after make apps)

# The packages whose tests start a problem's apps: each problem's own and its
# solutions'. The problems' other packages (their data, services, keys, the
# registry) start none, and test with the kit's beside the apps' build.
APP_PACKAGES = grep -E '/problems/[a-z0-9]+(/solutions)?$$'

test-kit: ## the Go tests of the packages that start no problem's app
	@mkdir -p build
	$(GOTEST) --jsonfile build/test-go-kit.json -- $(GOTEST_FLAGS) $$($(GO) list ./... | $(APP_PACKAGES) -v)

test-problems: ## the Go tests that start the problems' apps, one package at a time (build the apps first: make apps)
	@mkdir -p build
	$(GOTEST) --jsonfile build/test-go-problems.json -- $(GOTEST_FLAGS) $$($(GO) list ./problems/... | $(APP_PACKAGES))

# Tests that check every case of a large, fixed space in one goroutine check
# a sample under -race, where the detector finds nothing and makes them about
# 6 times slower; here they run whole, without it.
EXHAUSTIVE_TESTS = ^TestScanFindsNothingPublic$$

test-exhaustive: ## the exhaustive tests whole, without -race (test-problems samples them)
	@mkdir -p build
	$(GOTEST) --jsonfile build/test-go-exhaustive.json -- -count=1 -run '$(EXHAUSTIVE_TESTS)' ./problems/memo/

slowest:
	@cat build/test-go-*.json >build/test-go.json 2>/dev/null; \
	echo "tests that took 20 s or more:"; $(GO) tool gotestsum tool slowest --jsonfile build/test-go.json --threshold 20s

# Every problem's Go apps: each is a module of its own.
GO_APPS = $(wildcard problems/*/webapp/go problems/*/solutions/go)

test-webapps: ## vet, build and test the Go apps (each its own module)
	@for d in $(GO_APPS); do echo "vet+build+test $$d"; (cd $$d && $(GO) vet ./... && $(GO) build -o /dev/null . && $(GO) test -count=1 ./...) || exit 1; done

# A 30 s load: a newcomer's first score in about a minute. A contest's runs are
# 60 s (`bin/tunecon try blog`), and the starting scores (docs/scores.md) are theirs.
DEMO_DURATION ?= 30s

demo: build ## start the blog reference app, benchmark it (a 30 s load), print the result, stop it
	$(BIN)/tunecon try blog --duration $(DEMO_DURATION)
	@echo "(a $(DEMO_DURATION) load; a contest's runs, and the starting scores in docs/scores.md, are 60 s: bin/tunecon try blog)"

perf: deps ## engine vs wrk requests per CPU-second, and idle-user memory
	@command -v wrk >/dev/null || { if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq $(APT_PACKAGES_PERF) >/dev/null; else echo "perf needs wrk: apt-get install wrk"; exit 1; fi; }
	$(GO) build -o $(BIN)/perf ./tools/perf
	$(BIN)/perf

scores: deps deps-system ## starting scores of every language (or LANGS=go,rust) and store, as a Markdown table
	$(GO) run ./tools/scores -problem $(PROBLEM) $(if $(LANGS),-langs $(LANGS))

RUNS ?= 5
# PIN=1: headroom and stability run the app and the benchmarker on separate halves of the CPUs; PIN=0: they share them.
PIN ?= 1

stability: deps ## PROBLEM's reference and tuned apps RUNS times each (seeds 1..RUNS): scores, mean, stdev, CV
	$(GO) run ./tools/stability -problem $(PROBLEM) -runs $(RUNS) -pin=$(PIN)

MINUTES ?= 10

steadiness: deps ## how steady this machine is: MINUTES of compute and memory work in turns, with their CVs
	$(GO) run ./tools/steadiness -stretches $(MINUTES) -pin=$(PIN)

portal-perf: deps ## the portal under 600 teams' browsers and 50 workers: p50/p99 of each page
	$(GO) run ./tools/portalperf $(PORTAL_PERF_FLAGS)

headroom: deps ## benchmark PROBLEM's reference and tuned apps side by side (spoiler)
	$(GO) run ./tools/headroom -problem $(PROBLEM) -pin=$(PIN)

new-problem: ## create problems/NAME from the skeleton and register it (make new-problem NAME=x)
	@if [ -z "$(NAME)" ]; then echo "usage: make new-problem NAME=x (lowercase letters and digits, starting with a letter)" >&2; exit 2; fi
	$(GO) run ./tools/newproblem -name "$(NAME)"

lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Throw-away Debian 12 machines (systemd-nspawn over a debootstrapped root,
# built once under ~/.cache/tunecon/deploy) for testing the playbooks.
deploy-boot: ## as root: boot two throw-away Debian 12 machines, check them, tear them down
	deploy/test/boot.sh

# make dist: what the playbooks (deploy/) install. tunecon needs no cgo (its
# SQLite is modernc.org/sqlite, pure Go), so both architectures cross-build
# here with CGO_ENABLED=0. The Go toolchain the team servers build the
# reference apps with is this machine's, packed as go.dev ships it
# (go<version>.linux-<arch>.tar.gz, a go/ folder): no distribution has the
# version the apps' go.mod asks for. An arm64 team server needs that file
# from go.dev/dl in dist/. DIST_PROBLEMS=blog packs fewer problems.
DIST := dist
DIST_PROBLEMS ?=
GO_TOOLCHAIN = $(DIST)/$(shell $(GO) env GOVERSION).$(shell $(GO) env GOOS)-$(shell $(GO) env GOARCH).tar.gz

dist: ## tunecon for linux/amd64 and arm64, a tarball per problem for team servers, the Go toolchain, SHA256SUMS
	@mkdir -p $(DIST)
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -o $(DIST)/tunecon-linux-amd64 ./cmd/tunecon
	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -trimpath -o $(DIST)/tunecon-linux-arm64 ./cmd/tunecon
	$(GO) run ./tools/dist -out $(DIST) $(if $(DIST_PROBLEMS),-problems $(DIST_PROBLEMS))
	@$(MAKE) --no-print-directory $(GO_TOOLCHAIN)
	cd $(DIST) && sha256sum tunecon-linux-* problem-*.tar.gz go*.linux-*.tar.gz > SHA256SUMS
	@echo "dist: $$(ls $(DIST) | tr '\n' ' ')"

$(DIST)/go%.tar.gz:
	tar -C "$$($(GO) env GOROOT)/.." --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
		--transform "s|^$$(basename "$$($(GO) env GOROOT)")|go|" -cf - "$$(basename "$$($(GO) env GOROOT)")" | gzip -n > $@.tmp
	mv $@.tmp $@

# The deployment's tools (deploy/requirements.txt: ansible-core, ansible-lint)
# in a virtualenv of their own, remade when the pins change.
DEPLOY_VENV := build/venv-deploy
$(DEPLOY_VENV)/.installed: deploy/requirements.txt
	python3 -m venv $(DEPLOY_VENV)
	$(DEPLOY_VENV)/bin/pip install -q -r deploy/requirements.txt
	touch $@

deploy-venv: $(DEPLOY_VENV)/.installed ## ansible-core and ansible-lint in build/venv-deploy, for deploy/'s playbooks

deploy-test: ## as root: apply the playbooks to fresh Debian 12 machines, run 2 teams' jobs, apply again, lint
	@$(MAKE) --no-print-directory dist DIST_PROBLEMS=$(PROBLEM)
	@$(MAKE) --no-print-directory $(DEPLOY_VENV)/.installed
	VENV=$(CURDIR)/$(DEPLOY_VENV) PROBLEM=$(PROBLEM) deploy/test/run.sh

# The playbooks' syntax check and ansible-lint's production profile: what CI
# checks of deploy/ (make deploy-test applies them for real, as root): 40 s
# on 2 busy cores once the virtualenv exists. Where the virtualenv cannot be made (no
# PyPI, no python3-venv) it skips, saying so; under CI (CI=true) it fails.
test-deploy: ## the playbooks' syntax check and ansible-lint
	@mkdir -p $(dir $(DEPLOY_VENV)); \
	if ! $(MAKE) --no-print-directory $(DEPLOY_VENV)/.installed >$(DEPLOY_VENV).log 2>&1; then \
		cat $(DEPLOY_VENV).log >&2; \
		if [ "$$CI" = true ]; then echo "test-deploy: could not install deploy/requirements.txt into $(DEPLOY_VENV)" >&2; exit 1; fi; \
		echo "test-deploy: skipped: could not install ansible-core and ansible-lint into $(DEPLOY_VENV) (offline? python3-venv?)"; \
	else \
		cd deploy && export PATH="$(CURDIR)/$(DEPLOY_VENV)/bin:$$PATH" && \
		ansible-playbook -i inventory.example.yml site.yml portal.yml worker.yml team.yml --syntax-check >/dev/null && \
		ansible-lint --offline -q && echo "test-deploy: the playbooks' syntax check and ansible-lint (production profile) passed"; \
	fi
