#!/usr/bin/env bash
# `make test`: the whole suite (tests marked slow aside), the compose stack's tests included
# wherever a Docker engine answers or can be provisioned (deploy/docker/engine.sh up: root and
# apt), and then a named subset of the real-Kafka tests against a Kafka container
# (HOLDEM_TEST_BROKER=container). Where no engine can be had it says so on one line and runs the
# rest; under CI=true that is a failure. An engine this script started is stopped at the end,
# after a check that the tests left no container of theirs behind. Extra arguments go to pytest
# (and then the container-broker subset is not run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

marks="not slow"
started=""
if host="$(deploy/docker/engine.sh env 2>/dev/null)"; then
    eval "$host"
    # An engine answers; compose v2 may still need building (engine.sh up does only that then).
    eval "$(deploy/docker/engine.sh up)"
elif host="$(deploy/docker/engine.sh up)"; then
    eval "$host"
    started=1
elif [[ "${CI:-}" == true ]]; then
    echo "make test: FAILED: no Docker engine could be provisioned (the line above says why); CI runs the container tests" >&2
    exit 1
else
    echo "make test: tests/containers NOT RUN: no Docker engine answers and none could be provisioned (the line above says why)" >&2
    marks="not slow and not containers"
fi
export DOCKER_HOST

leftovers() {
    [[ -n "${DOCKER_HOST:-}" ]] || return 0
    local left
    # The compose stacks' (project holdemtest*) and testcontainers' (its label) containers.
    left="$({ docker ps -a --format '{{.Names}}' | grep '^holdemtest'
              docker ps -a --filter label=org.testcontainers --format '{{.Names}}'; } 2>/dev/null || true)"
    if [[ -n "$left" ]]; then
        echo "make test: FAILED: the tests left containers behind: $(echo "$left" | tr '\n' ' ')" >&2
        return 1
    fi
}
finish() {
    local rc=$?
    leftovers || rc=1
    [[ -z "$started" ]] || deploy/docker/engine.sh down || true
    exit "$rc"
}
trap finish EXIT

# --durations: where the suite's time goes, printed for whoever keeps CI under its 40 minutes.
"${UV:-uv}" run --frozen pytest -m "$marks" --durations=25 "$@"

# The suite's broker as Kafka containers (testcontainers, the compose stack's image and start
# script; its controller and its broker, two containers as in the stack, ADR 042): the real-Kafka
# tests of authorization, transactions, whole rounds and a restart.
if [[ $# -eq 0 && "$marks" == "not slow" ]]; then
    image="$(deploy/docker/stack.sh env | sed -n 's/^export HOLDEM_KAFKA_IMAGE=//p')"
    HOLDEM_TEST_BROKER=container HOLDEM_KAFKA_IMAGE="$image" "${UV:-uv}" run --frozen pytest -m kafka \
        tests/integration/test_auth_kafka.py tests/integration/test_fenced_offsets_kafka.py \
        tests/integration/test_rounds.py tests/integration/test_runtime_kafka.py \
        tests/integration/test_kafka_smoke.py tests/integration/test_pending_transactions_kafka.py
fi
