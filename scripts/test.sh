#!/usr/bin/env bash
# `make test`: the whole suite (tests marked slow aside), the compose stack's tests included
# wherever a Docker engine answers or can be provisioned (deploy/docker/engine.sh up: root and
# apt). Where none can be had it says so on one line and runs the rest; under CI=true that is a
# failure. An engine this script started is stopped at the end, after a check that the tests
# left no container of theirs behind. Extra arguments go to pytest.
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
    left="$(docker ps -a --format '{{.Names}}' 2>/dev/null | grep '^holdemtest' || true)"
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

"${UV:-uv}" run --frozen pytest -m "$marks" "$@"
