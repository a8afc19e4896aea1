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
# The tests that need no broker, no engine, no database and no browser (CPU only, nothing timed
# against a service) run first, in a session of their own, while the engine is provisioned and the
# images are built in the background: the stack's first test waited about three minutes for them,
# and the tests that time a broker or a service never run beside that build (a test of broker
# outages failed under it once). With extra arguments: one session, the engine provisioned first.
alone="not kafka and not containers and not postgres and not browser"
started=""
engine_was_up=""
alone_rc=0
host="$(deploy/docker/engine.sh env 2>/dev/null)" && engine_was_up=1
prepared=""
if [[ $# -eq 0 ]]; then
    prepare_log="$(mktemp -t holdem-prepare.XXXXXX)"
    prepare_secrets="$(mktemp -d -t holdem-prepare-secrets.XXXXXX)"
    # A process group of its own (setsid), so that an early end of this script stops all of it.
    # The stack's images are built under a project of their own (removed at the end): each test's
    # own build, under its own project, then finds every layer in BuildKit's cache.
    COMPOSE_PROJECT_NAME=holdemprepare HOLDEM_SECRETS_DIR="$prepare_secrets" setsid bash -c \
        'began=$SECONDS; deploy/docker/stack.sh build && echo "make test: engine and images ready in $((SECONDS - began))s, in the background"' \
        >"$prepare_log" 2>&1 &
    prepared=$!
    echo "make test: provisioning the engine and building the images in the background (log: $prepare_log)"
    # A failure here still lets the rest run (every failure of the suite is seen in one run); the
    # script's status is then this session's.
    "${UV:-uv}" run --frozen pytest -m "not slow and $alone" --durations=10 || alone_rc=$?
    status=0
    wait "$prepared" || status=$?
    prepared=""
    if [[ $status -ne 0 ]]; then
        echo "make test: the background engine and image build ended with $status; its log's end:" >&2
        tail -n 5 "$prepare_log" >&2 || true
    else
        tail -n 1 "$prepare_log"
    fi
    marks="not slow and not ($alone)"
fi
if host="$(deploy/docker/engine.sh env 2>/dev/null)"; then
    eval "$host"
    # An engine answers; compose v2 may still need building (engine.sh up does only that then).
    eval "$(deploy/docker/engine.sh up)"
    [[ -n "$engine_was_up" ]] || started=1
elif host="$(deploy/docker/engine.sh up)"; then
    eval "$host"
    started=1
elif [[ "${CI:-}" == true ]]; then
    echo "make test: FAILED: no Docker engine could be provisioned (the line above says why); CI runs the container tests" >&2
    exit 1
else
    echo "make test: tests/containers NOT RUN: no Docker engine answers and none could be provisioned (the line above says why)" >&2
    marks="$marks and not containers"
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
    if [[ -n "$prepared" ]]; then  # stopped early: the background build goes too
        kill -- "-$prepared" 2>/dev/null || true
        wait "$prepared" 2>/dev/null || true
    fi
    if [[ -n "${prepare_log:-}" ]]; then
        [[ -z "${DOCKER_HOST:-}" ]] || docker image prune --all --force \
            --filter label=com.docker.compose.project=holdemprepare >/dev/null 2>&1 || true
        rm -rf "$prepare_secrets" "$prepare_log"
    fi
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
if [[ $# -eq 0 && "$marks" != *"not containers" ]]; then
    image="$(deploy/docker/stack.sh env | sed -n 's/^export HOLDEM_KAFKA_IMAGE=//p')"
    HOLDEM_TEST_BROKER=container HOLDEM_KAFKA_IMAGE="$image" "${UV:-uv}" run --frozen pytest -m kafka \
        tests/integration/test_auth_kafka.py tests/integration/test_fenced_offsets_kafka.py \
        tests/integration/test_rounds.py tests/integration/test_runtime_kafka.py \
        tests/integration/test_kafka_smoke.py tests/integration/test_pending_transactions_kafka.py
fi
if [[ $alone_rc -ne 0 ]]; then
    echo "make test: FAILED: the tests that need no broker, engine, database or browser (exit $alone_rc, above)" >&2
    exit "$alone_rc"
fi
