# Casino Hold'em backend: the commands a newcomer needs. `make run` plays the game, `make test` tests it,
# `make check` is the fast inner loop (lint, unit, property and service tests; docs/testing.md).
SHELL := /bin/bash
export UV_PYTHON_DOWNLOADS := never
UV ?= uv
PY := $(UV) run --frozen python
ROUNDS ?= 0
PROMTOOL = "$$(deploy/prometheus/provision.sh)/promtool"
SHUFFLES ?= 10000000
OUT ?= rng-report
SOAK_MINUTES ?= 60
SOAK_RATE ?= 150
SOAK_WARMUP ?= 15
SCALE_INSTANCES ?= 1,2,4

.PHONY: sync install prometheus postgres chromium run serve check test test-containers test-slow chaos soak lint fmt bench bench-scale profile rng-report contracts core-data check-rules check-rules-v3 kafka-up kafka-down tenant up down engine-down base-images clean

sync:  ## Python deps only (uv, locked)
	@command -v $(UV) >/dev/null || { python3 -m pip install --quiet uv==0.13.8 && { pyenv rehash 2>/dev/null || true; }; }
	$(UV) sync --frozen

install: sync  ## Python deps (uv, locked) and the Kafka jars (Maven, cached)
	deploy/kafka/kafka.sh fetch

prometheus:  ## promtool and the prometheus server from Debian's package into deploy/prometheus/.cache/ (no root)
	@deploy/prometheus/provision.sh >/dev/null

postgres:  ## PostgreSQL from Debian's package for the back office's tests (apt-get when absent: root)
	@deploy/postgres/provision.sh >/dev/null

chromium:  ## Debian's chromium for the back office's browser test (apt-get when absent: root)
	@deploy/chromium/provision.sh >/dev/null

run: install  ## start Kafka and the four services, play a demo load, print a summary (SEAMLESS=1: seamless wallet)
	$(PY) -m holdem.harness.demo --rounds $(ROUNDS) $(if $(SEAMLESS),--seamless)

serve: install  ## broker (kept; WIPE=1 wipes it), topics, the four services and the back office (its URL printed; NOBO=1: without), the live auditor (NOAUDITOR=1: without), up until Ctrl-C (SEAMLESS=1: seamless wallet + reference operator wallet)
	$(PY) -m holdem.ops.serve $(if $(WIPE),--wipe) $(if $(TLS),--tls) $(if $(NODES),--nodes $(NODES)) $(if $(SEAMLESS),--seamless) $(if $(NOBO),--no-backoffice) $(if $(NOAUDITOR),--no-auditor)

# The tiers that need no broker, no Docker, no PostgreSQL and no browser (promtool is unpacked
# without root): what a developer runs before each commit; `make test` runs everything.
CHECK_TESTS = tests/unit tests/property tests/service
CHECK_MARKS = not slow and not enumeration and not kafka and not containers and not postgres and not browser
check: prometheus lint  ## lint, then the unit, property and service tests: no broker, no Docker (a few minutes)
	$(UV) run --frozen pytest $(CHECK_TESTS) -m "$(CHECK_MARKS)" -q

test: install prometheus postgres chromium  ## the whole suite: real Kafka (its own broker), and the compose stack in a Docker engine (provisioned as root when none answers)
	UV=$(UV) scripts/test.sh

test-containers: install prometheus  ## only the compose stack's tests (make test runs them too)
	@eval "$$(deploy/docker/engine.sh up)" && $(UV) run --frozen pytest -m containers tests/containers

test-slow: install  ## exhaustive checks (all 133,784,560 seven-card hands)
	$(UV) run --frozen pytest -m slow

CHAOS_ROUNDS ?= 10000
CHAOS_NODES ?= both
chaos: install  ## issue 8's proof under fire: kills, broker losses, scaling; audit + ownership (CHAOS_ROUNDS, CHAOS_SEED, CHAOS_NODES=1|3|both, CHAOS_PHASES=single,cluster,outages)
	$(PY) -m holdem.harness.chaos --rounds $(CHAOS_ROUNDS) --nodes $(CHAOS_NODES) $(if $(CHAOS_SEED),--seed $(CHAOS_SEED))

soak: install  ## an hour of steady open-loop load after a warm-up (SOAK_MINUTES, SOAK_WARMUP, SOAK_RATE rounds/s): memory, p99, lag, topic sizes, errors, audit; report in docs/soak/
	$(PY) -m holdem.harness.soak --minutes $(SOAK_MINUTES) --warmup-minutes $(SOAK_WARMUP) --rate $(SOAK_RATE) --out docs/soak

lint: sync
	$(UV) run --frozen ruff check .
	$(UV) run --frozen ruff format --check .
	$(UV) run --frozen mypy shared services
	$(UV) run --frozen lint-imports

fmt: install
	$(UV) run --frozen ruff format .
	$(UV) run --frozen ruff check --fix .

bench: install  ## speed figures, each beside a baseline measured in the same run
	$(PY) bench/run.py

bench-scale: install  ## settled rounds/s with SCALE_INSTANCES (1,2,4) instances of every service (docs/sizing.md)
	SCALE_INSTANCES=$(SCALE_INSTANCES) $(PY) bench/bench_scale.py

profile: install  ## a flame graph per service under a closed-loop load into docs/flamegraphs/ (py-spy through uv --with: not a project dependency; needs ptrace rights)
	$(UV) run --frozen --with py-spy==0.4.2 python bench/profile_services.py

rng-report: install  ## the statistical RNG report on SHUFFLES decks into OUT (all cores; 10M took 37 min on 2 shared cores)
	$(UV) run --frozen holdem rng-report --shuffles $(SHUFFLES) --out $(OUT)

contracts: install  ## JSON Schema files, the contract version lock, the services' AsyncAPI
	$(PY) scripts/export_contracts.py

core-data: install  ## regenerate what holdem-core ships: the evaluator's tables and the optimal decision table (full enumeration, ~1 min)
	$(PY) scripts/generate_core_data.py

check-rules: prometheus  ## promtool: the Prometheus rules, their unit tests, prometheus.yml
	$(PROMTOOL) check rules deploy/prometheus/rules/*.yml
	$(PROMTOOL) test rules deploy/prometheus/tests/*.test.yml
	$(PROMTOOL) check config deploy/prometheus/prometheus.yml

check-rules-v3:  ## the same with upstream's promtool v3.1.0 (built once from the Go module proxy; the compose stack's Prometheus where a registry answers)
	@v3="$$(deploy/prometheus/provision-v3.sh)" && \
		"$$v3/promtool" check rules deploy/prometheus/rules/*.yml && \
		"$$v3/promtool" test rules deploy/prometheus/tests/*.test.yml && \
		"$$v3/promtool" check config deploy/prometheus/prometheus.yml

kafka-up: install  ## a local KRaft broker on 127.0.0.1 (SCRAM, ACLs; no Docker; NODES=3: a cluster); prints its address
	@deploy/kafka/kafka.sh up $(if $(WIPE),--wipe) $(if $(TLS),--tls) $(if $(NODES),--nodes $(NODES)) >/dev/null
	@$(PY) -m holdem.ops.acl apply --env deploy/kafka/.run/clients/admin.env >/dev/null
	@echo "credentials: deploy/kafka/.run/clients/<principal>.env" >&2
	@cat deploy/kafka/.run/bootstrap

tenant: install  ## T=<id>: a tenant on the broker of kafka-up: its prefixed topics, operator-<id> and its ACLs
	@test -n "$(T)" || { echo "usage: make tenant T=<tenant id>" >&2; exit 2; }
	@set -a; . deploy/kafka/.run/clients/admin.env; set +a; \
		$(PY) -m holdem.ops.create_topics --prefix $(T) >/dev/null && \
		$(PY) -m holdem.ops.tenants add $(T) --env deploy/kafka/.run/clients/admin.env \
			--out deploy/kafka/.run/clients

kafka-down:  ## stop the broker of kafka-up (its data stays unless WIPE=1)
	@deploy/kafka/kafka.sh down $(if $(WIPE),--wipe)

up:  ## the compose stack: engine (provisioned as root if none answers), images (built offline if no registry answers), vault key; up --wait
	deploy/docker/stack.sh up

down:  ## stop and remove the compose stack and its volumes (the engine stays; `make engine-down` stops one we started)
	deploy/docker/stack.sh down

engine-down:  ## stop the dockerd that deploy/docker/engine.sh started (never another)
	deploy/docker/engine.sh down

base-images:  ## the Debian-built stand-ins for python:3.11-slim, apache/kafka and prom/prometheus (no registry needed)
	@eval "$$(deploy/docker/engine.sh up)" && deploy/docker/base-images.sh build
