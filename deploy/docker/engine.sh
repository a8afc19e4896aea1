#!/usr/bin/env bash
# A Docker engine and Docker Compose v2 wherever the tests run, installed by nothing but this file.
#
#   engine.sh up     use the engine that answers (DOCKER_HOST, else the default socket); when none
#                    does, provision one: Debian's docker.io with apt (root), then `dockerd` with its
#                    own data root, exec root, pidfile and socket under $ENGINE_DIR. Then make sure
#                    `docker compose` (v2) works: when the CLI has no compose plugin, build it from
#                    the Go module proxy once (cached) into ~/.docker/cli-plugins/docker-compose.
#                    Prints `export DOCKER_HOST=...` lines for eval as its stdout (nothing else).
#   engine.sh env    the same export lines for an engine already up (exit 3 when none answers)
#   engine.sh down   stop the dockerd that `up` started (its pidfile under $ENGINE_DIR), and only it
#   engine.sh check  exit 0 if an engine answers and compose v2 runs; else one line saying what is
#                    missing (stderr), exit 3. Installs nothing.
#
# Environment: HOLDEM_ENGINE_DIR (default deploy/docker/.run: data, exec root, socket, log),
# HOLDEM_DOCKER_CACHE (default ~/.cache/holdem-docker: the compose binary, kept across clones),
# COMPOSE_VERSION (default v2.29.7), ENGINE_START_TIMEOUT (s, default 60).
#
# The daemon we start shares the host with whatever else runs there, so it leaves the host's
# firewall alone (--iptables=false, no default bridge) and takes its address pool from a range
# derived from its folder: two clones' daemons do not collide. Containers reach each other on
# compose's network and the host through published ports (docker-proxy on 127.0.0.1); builds
# that download packages use the host's network (compose's `build.network: host`).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ENGINE_DIR="${HOLDEM_ENGINE_DIR:-$HERE/.run}"
CACHE="${HOLDEM_DOCKER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/holdem-docker}"
COMPOSE_VERSION="${COMPOSE_VERSION:-v2.29.7}"
START_TIMEOUT="${ENGINE_START_TIMEOUT:-60}"
PLUGIN_DIR="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"

log() { echo "engine.sh: $*" >&2; }
die() { log "$*"; exit 1; }

own_socket() { echo "$ENGINE_DIR/docker.sock"; }

answers() { DOCKER_HOST="$1" docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

# The engine to use: DOCKER_HOST as given, else ours, else the system's default socket.
find_engine() {
    command -v docker >/dev/null || return 1
    if [[ -n "${DOCKER_HOST:-}" ]]; then
        answers "$DOCKER_HOST" && { echo "$DOCKER_HOST"; return 0; }
        return 1
    fi
    local candidate
    for candidate in "unix://$(own_socket)" "unix:///var/run/docker.sock"; do
        answers "$candidate" && { echo "$candidate"; return 0; }
    done
    return 1
}

install_engine() {
    [[ "$(id -u)" == 0 ]] || die "no Docker engine answers and this is not root: cannot install docker.io (run as root, or start an engine and set DOCKER_HOST)"
    command -v apt-get >/dev/null || die "no Docker engine answers and there is no apt-get to install Debian's docker.io"
    log "installing Debian's docker.io (dockerd, containerd, runc) with apt"
    if ! apt-cache policy docker.io 2>/dev/null | grep -q 'Candidate: [0-9]'; then
        apt-get update -qq >&2 || die "apt-get update failed"
    fi
    # The package's service is not started (no init here): this script runs the daemon itself.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        docker.io >&2 || die "apt-get install docker.io failed"
}

# 10.N.0.0/16 with N from the folder's path, so each clone's daemon has its own subnets.
address_pool() {
    local n
    n=$(( 0x$(echo -n "$ENGINE_DIR" | sha256sum | cut -c1-4) % 50 + 200 ))
    echo "base=10.$n.0.0/16,size=24"
}

running_pid() {
    local pid
    [[ -f "$ENGINE_DIR/dockerd.pid" ]] || return 1
    pid="$(cat "$ENGINE_DIR/dockerd.pid")"
    [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "--pidfile $ENGINE_DIR/dockerd.pid" || return 1
    echo "$pid"
}

start_daemon() {
    command -v dockerd >/dev/null || install_engine
    [[ "$(id -u)" == 0 ]] || die "dockerd needs root"
    mkdir -p "$ENGINE_DIR/data" "$ENGINE_DIR/exec"
    local sock
    sock="$(own_socket)"
    # A unix socket path has at most 107 bytes (containerd's lives under the exec root).
    [[ ${#ENGINE_DIR} -le 60 ]] || die "HOLDEM_ENGINE_DIR is too long for unix sockets (${#ENGINE_DIR} > 60 chars): $ENGINE_DIR"
    rm -f "$sock"
    log "starting dockerd (data root $ENGINE_DIR/data, socket $sock)"
    # setsid: the daemon outlives this script and is not in its process group (make's ^C).
    setsid dockerd \
        --data-root "$ENGINE_DIR/data" \
        --exec-root "$ENGINE_DIR/exec" \
        --pidfile "$ENGINE_DIR/dockerd.pid" \
        --host "unix://$sock" \
        --iptables=false --ip-masq=false --bridge=none \
        --default-address-pool "$(address_pool)" \
        --storage-driver overlay2 \
        >"$ENGINE_DIR/dockerd.log" 2>&1 </dev/null &
    local deadline=$((SECONDS + START_TIMEOUT))
    until answers "unix://$sock"; do
        if [[ $SECONDS -ge $deadline ]] || ! kill -0 $! 2>/dev/null; then
            tail -n 20 "$ENGINE_DIR/dockerd.log" >&2 || true
            die "dockerd did not answer within ${START_TIMEOUT}s (log: $ENGINE_DIR/dockerd.log)"
        fi
        sleep 0.5
    done
    log "dockerd $(DOCKER_HOST="unix://$sock" docker version --format '{{.Server.Version}}') up (pid $(cat "$ENGINE_DIR/dockerd.pid"))"
}

# A compose built by `go install` says "version dev" (no release ldflags): the exit status is the test.
compose_works() { docker compose version >/dev/null 2>&1; }

install_compose() {
    local bin="$CACHE/compose-$COMPOSE_VERSION/cmd"
    if [[ ! -x "$bin" ]]; then
        command -v go >/dev/null || die "docker compose v2 is missing and there is no Go toolchain to build it (go install github.com/docker/compose/v2/cmd@$COMPOSE_VERSION)"
        mkdir -p "$CACHE"
        (
            flock 9
            if [[ ! -x "$bin" ]]; then
                log "building Docker Compose $COMPOSE_VERSION from the Go module proxy (once, about 2 min; cached in $CACHE)"
                GOBIN="$CACHE/compose-$COMPOSE_VERSION" GOFLAGS=-mod=mod \
                    go install "github.com/docker/compose/v2/cmd@$COMPOSE_VERSION" >&2 ||
                    die "go install of compose $COMPOSE_VERSION failed"
            fi
        ) 9>"$CACHE/.compose.lock"
    fi
    mkdir -p "$PLUGIN_DIR"
    install -m 0755 "$bin" "$PLUGIN_DIR/docker-compose"
    compose_works || die "$PLUGIN_DIR/docker-compose does not run"
}

exports() { echo "export DOCKER_HOST=$1"; }

cmd_up() {
    command -v docker >/dev/null || install_engine
    local host
    if ! host="$(find_engine)"; then
        [[ -z "${DOCKER_HOST:-}" ]] || die "DOCKER_HOST=$DOCKER_HOST does not answer"
        start_daemon
        host="unix://$(own_socket)"
    fi
    compose_works || install_compose
    exports "$host"
}

cmd_env() {
    local host
    host="$(find_engine)" || { log "no Docker engine answers"; exit 3; }
    exports "$host"
}

cmd_check() {
    command -v docker >/dev/null || { log "no docker CLI (deploy/docker/engine.sh up installs one as root)"; exit 3; }
    find_engine >/dev/null || { log "no Docker engine answers${DOCKER_HOST:+ at $DOCKER_HOST} (deploy/docker/engine.sh up starts one as root)"; exit 3; }
    compose_works || { log "no Docker Compose v2 (deploy/docker/engine.sh up builds it)"; exit 3; }
}

cmd_down() {
    local pid
    pid="$(running_pid)" || { log "no dockerd of $ENGINE_DIR running"; return 0; }
    log "stopping dockerd (pid $pid)"
    kill -TERM "$pid"
    local deadline=$((SECONDS + 30))
    while kill -0 "$pid" 2>/dev/null; do
        if [[ $SECONDS -ge $deadline ]]; then
            log "dockerd still up after 30s: SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
        sleep 0.5
    done
    rm -f "$(own_socket)"
}

case "${1:-}" in
    up) cmd_up ;;
    env) cmd_env ;;
    down) cmd_down ;;
    check) cmd_check ;;
    *) echo "usage: engine.sh up|env|down|check" >&2; exit 2 ;;
esac
