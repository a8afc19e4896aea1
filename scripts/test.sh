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

# The images, built in the background while tests that need none run (the stack's first test used
# to wait three minutes for them, the longest step of CI): the base images by name (base-images.sh
# builds one at a time, so a test asking meanwhile waits for them), the stack's images into
# BuildKit's cache, under a project of their own removed at the end (each test's own build, under
# its own project, then finds every layer cached). A failed build here fails no test by itself:
# the tests' own builds say why.
prebuild=""
if [[ "$marks" == "not slow" ]]; then
    prebuild_log="$(mktemp -t holdem-prebuild.XXXXXX)"
    prebuild_secrets="$(mktemp -d -t holdem-prebuild-secrets.XXXXXX)"
    # A process group of its own (setsid), so that an early end of this script stops all of it.
    COMPOSE_PROJECT_NAME=holdemprebuild HOLDEM_SECRETS_DIR="$prebuild_secrets" setsid bash -c \
        'started=$SECONDS; deploy/docker/stack.sh build && echo "the images were built in $((SECONDS - started))s, in the background"' \
        >"$prebuild_log" 2>&1 &
    prebuild=$!
    echo "make test: building the images in the background (log: $prebuild_log)"
fi
prebuilt() {
    [[ -n "$prebuild" ]] || return 0
    local status=0
    kill -- "-$prebuild" 2>/dev/null && echo "make test: the background image build was still running: stopped" >&2
    wait "$prebuild" || status=$?
    if [[ $status -ne 0 ]]; then
        echo "make test: the background image build ended with $status; its log's end:" >&2
        tail -n 5 "$prebuild_log" >&2 || true
    else
        echo "make test: $(tail -n 1 "$prebuild_log")"
    fi
    docker image prune --all --force --filter label=com.docker.compose.project=holdemprebuild >/dev/null 2>&1 || true
    rm -rf "$prebuild_secrets" "$prebuild_log"
    prebuild=""
}

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
    prebuilt
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
