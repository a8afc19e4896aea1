#!/usr/bin/env bash
# The compose stack as `make up` / `make down` run it, on any machine with an engine or root:
#
#   stack.sh up [compose up args]   an engine (engine.sh up), every published host port checked
#                                   free (else: which HOLDEM_*_PORT to set, before any build), the
#                                   base images (the upstream ones when present or pullable, else
#                                   the Debian-built stand-ins of base-images.sh), the secrets
#                                   (below), then `docker compose up --build --detach --wait`; a
#                                   failed up is taken down again (`down`, the volumes kept), so
#                                   no half-started stack holds ports; then the operator's env
#                                   file, and the images the rebuild left dangling are removed
#   stack.sh down [compose down args]  `docker compose down --volumes` (the engine stays up;
#                                   `deploy/docker/engine.sh down` stops the one it started)
#   stack.sh build [compose build args]  the base images and the stack's images, nothing started
#                                   (`make test` runs it in the background beside the tests that
#                                   need no engine, so that the stack's tests find the images built
#                                   and BuildKit's cache warm)
#   stack.sh env                    the export lines `up` uses (DOCKER_HOST, HOLDEM_*_IMAGE,
#                                   HOLDEM_SECRETS_DIR), for eval before other compose commands
#
# Secrets, in HOLDEM_SECRETS_DIR (default deploy/compose/.secrets/, git-ignored, mode 0700):
#   dealer-vault-keys  the dealer's key ring, 32 random bytes made at the first `up` and kept
#                      (the vault's records need the same key to be read again: never delete it
#                      while the stack's data lives)
#   postgres-password  the back office database's password, made at the first `up` and kept;
#   backoffice-pgpass  the same as a pgpass line, for libpq in the back office's containers
#   ca.pem             the CA bundle a build trusts besides its base's: the host's system bundle
#                      plus HOLDEM_EXTRA_CA (a PEM file, or a folder of *.pem / *.crt), made anew
#                      at each `up`; a BuildKit secret, in no image layer
#   operator.env       written at each successful `up`: the HOLDEM_KAFKA_* an operator's process
#                      on this host connects with (as `make serve`'s clients/operator.env)
# Environment: COMPOSE_PROJECT_NAME, HOLDEM_*_PORT (docker-compose.yml), HOLDEM_PULL_TIMEOUT
# (s, default 30: how long a pull may try before the stand-ins are built).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SECRETS="${HOLDEM_SECRETS_DIR:-$ROOT/deploy/compose/.secrets}"
PULL_TIMEOUT="${HOLDEM_PULL_TIMEOUT:-30}"
UPSTREAM_PYTHON=python:3.11-slim
UPSTREAM_KAFKA=apache/kafka:4.4.0
UPSTREAM_PROMETHEUS=prom/prometheus:v3.1.0
UPSTREAM_POSTGRES=postgres:15

log() { echo "stack.sh: $*" >&2; }
die() { log "$*"; exit 1; }

# An upstream image is used when the engine has it or a registry gives it within the timeout.
available() {
    docker image inspect "$1" >/dev/null 2>&1 && return 0
    timeout "$PULL_TIMEOUT" docker pull -q "$1" >/dev/null 2>&1
}

choose_images() {
    local missing=()
    [[ -n "${HOLDEM_PYTHON_IMAGE:-}" ]] || { available "$UPSTREAM_PYTHON" && export HOLDEM_PYTHON_IMAGE=$UPSTREAM_PYTHON || missing+=(python); }
    [[ -n "${HOLDEM_KAFKA_IMAGE:-}" ]] || { available "$UPSTREAM_KAFKA" && export HOLDEM_KAFKA_IMAGE=$UPSTREAM_KAFKA || missing+=(kafka); }
    [[ -n "${HOLDEM_PROMETHEUS_IMAGE:-}" ]] || { available "$UPSTREAM_PROMETHEUS" && export HOLDEM_PROMETHEUS_IMAGE=$UPSTREAM_PROMETHEUS || missing+=(prometheus); }
    [[ -n "${HOLDEM_POSTGRES_IMAGE:-}" ]] || { available "$UPSTREAM_POSTGRES" && export HOLDEM_POSTGRES_IMAGE=$UPSTREAM_POSTGRES || missing+=(postgres); }
    if [[ ${#missing[@]} -gt 0 ]]; then
        log "no registry gave ${missing[*]}: building the Debian-based stand-ins (deploy/docker/base-images.sh)"
        local line
        while read -r line; do
            case "$line" in
                "export HOLDEM_PYTHON_IMAGE="*) [[ " ${missing[*]} " == *" python "* ]] && eval "$line" ;;
                "export HOLDEM_KAFKA_IMAGE="*) [[ " ${missing[*]} " == *" kafka "* ]] && eval "$line" ;;
                "export HOLDEM_PROMETHEUS_IMAGE="*) [[ " ${missing[*]} " == *" prometheus "* ]] && eval "$line" ;;
                "export HOLDEM_POSTGRES_IMAGE="*) [[ " ${missing[*]} " == *" postgres "* ]] && eval "$line" ;;
            esac
        done < <("$HERE/base-images.sh" build "${missing[@]}")
    fi
    : "${HOLDEM_PYTHON_IMAGE:?}" "${HOLDEM_KAFKA_IMAGE:?}" "${HOLDEM_PROMETHEUS_IMAGE:?}" "${HOLDEM_POSTGRES_IMAGE:?}"
}

make_secrets() {
    mkdir -p "$SECRETS"
    chmod 0700 "$SECRETS"
    local keys="$SECRETS/dealer-vault-keys"
    if [[ ! -s "$keys" ]]; then
        log "a new dealer vault key in $keys (keep it while the stack's data lives)"
        (umask 077 && echo "k$(date -u +%Y%m%d):$(head -c 32 /dev/urandom | base64 -w0)" >"$keys.tmp")
        mv "$keys.tmp" "$keys"
    fi
    # Read by the dealer's user (uid 10001 in the image) through the bind mount; nobody else.
    chown 10001 "$keys" 2>/dev/null && chmod 0400 "$keys" || chmod 0644 "$keys"

    # The back office's database: its user's password (read by the database's entry point as
    # root), and the same as a pgpass line for libpq in the back office (uid 10001, mode 0600).
    local pgpw="$SECRETS/postgres-password"
    if [[ ! -s "$pgpw" ]]; then
        (umask 077 && head -c 24 /dev/urandom | base64 -w0 | tr '+/' '-_' >"$pgpw.tmp")
        mv "$pgpw.tmp" "$pgpw"
    fi
    (umask 077 && echo "*:*:*:holdem:$(cat "$pgpw")" >"$SECRETS/backoffice-pgpass")
    chown 10001 "$SECRETS/backoffice-pgpass" 2>/dev/null || chmod 0644 "$SECRETS/backoffice-pgpass"

    local bundle="$SECRETS/ca.pem" extra="${HOLDEM_EXTRA_CA:-}"
    : >"$bundle.tmp"
    [[ -r /etc/ssl/certs/ca-certificates.crt ]] && cat /etc/ssl/certs/ca-certificates.crt >>"$bundle.tmp"
    if [[ -n "$extra" ]]; then
        if [[ -d "$extra" ]]; then
            find "$extra" -maxdepth 1 -type f \( -name '*.pem' -o -name '*.crt' \) -print0 | sort -z |
                xargs -0 -r cat >>"$bundle.tmp"
        elif [[ -f "$extra" ]]; then
            cat "$extra" >>"$bundle.tmp"
        else
            die "HOLDEM_EXTRA_CA=$extra is neither a file nor a folder"
        fi
    fi
    mv "$bundle.tmp" "$bundle"
}

setup() {
    cd "$ROOT"
    eval "$("$HERE/engine.sh" up)"
    export DOCKER_HOST
    choose_images
    make_secrets
    export HOLDEM_SECRETS_DIR="$SECRETS"
}

print_env() {
    echo "export DOCKER_HOST=$DOCKER_HOST"
    echo "export HOLDEM_PYTHON_IMAGE=$HOLDEM_PYTHON_IMAGE"
    echo "export HOLDEM_KAFKA_IMAGE=$HOLDEM_KAFKA_IMAGE"
    echo "export HOLDEM_PROMETHEUS_IMAGE=$HOLDEM_PROMETHEUS_IMAGE"
    echo "export HOLDEM_POSTGRES_IMAGE=$HOLDEM_POSTGRES_IMAGE"
    echo "export HOLDEM_SECRETS_DIR=$HOLDEM_SECRETS_DIR"
}

# The host ports docker-compose.yml publishes, as variable:default (Grafana's with its profile).
PORTS=(
    HOLDEM_KAFKA_PORT:29092 HOLDEM_PROMETHEUS_PORT:9090 HOLDEM_BACKOFFICE_PORT:8080
    HOLDEM_DEALER_METRICS_PORT:9101 HOLDEM_WALLET_METRICS_PORT:9102
    HOLDEM_SETTLEMENT_METRICS_PORT:9103 HOLDEM_QUERY_METRICS_PORT:9104
    HOLDEM_AUDITOR_METRICS_PORT:9107
)

# Exit 0 when something holds the port on 127.0.0.1 (a bind there fails: also 0.0.0.0 holders).
port_taken() {
    python3 -c 'import socket, sys
s = socket.socket()
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(0)
sys.exit(1)' "$1"
}

# Every published port free, or held by this project's own containers (an up of a running stack
# replaces them); else name the variables to set and stop, before anything is built.
check_ports() {
    local project="${COMPOSE_PROJECT_NAME:-holdem}" ours="" entry var port taken=()
    [[ " ${COMPOSE_PROFILES:-} $* " == *grafana* ]] && PORTS+=(HOLDEM_GRAFANA_PORT:3000)
    [[ -z "${DOCKER_HOST:-}" ]] ||
        ours="$(docker ps --filter "label=com.docker.compose.project=$project" --format '{{.Ports}}' 2>/dev/null || true)"
    for entry in "${PORTS[@]}"; do
        var="${entry%%:*}"
        port="$(compose_value "$var" "${entry#*:}")"
        [[ "$port" =~ ^[0-9]+$ ]] || die "$var=$port is not a port number"
        [[ "$ours" == *":$port->"* ]] && continue
        if port_taken "$port"; then taken+=("$var=$port"); fi
    done
    [[ ${#taken[@]} -eq 0 ]] && return 0
    log "host ports in use on 127.0.0.1: ${taken[*]}"
    die "set each to a free port (e.g. HOLDEM_DEALER_METRICS_PORT=19101 make up) or stop what holds it; nothing was built or started"
}

# A value as compose reads it: the environment, else the .env file beside docker-compose.yml.
compose_value() {
    local name="$1" default="$2" line
    if [[ -n "${!name:-}" ]]; then echo "${!name}"; return; fi
    if [[ -f "$ROOT/.env" ]] && line="$(grep -E "^${name}=" "$ROOT/.env" | tail -n 1)"; then
        line="${line#*=}"; line="${line%\"}"; line="${line#\"}"
        echo "$line"
        return
    fi
    echo "$default"
}

write_operator_env() {
    local file="$SECRETS/operator.env"
    (
        umask 077
        {
            echo "# The operator principal of the compose stack (deploy/docker/stack.sh up writes it)."
            echo "HOLDEM_KAFKA_BOOTSTRAP=127.0.0.1:$(compose_value HOLDEM_KAFKA_PORT 29092)"
            echo "HOLDEM_KAFKA_SECURITY_PROTOCOL=SASL_PLAINTEXT"
            echo "HOLDEM_KAFKA_SASL_MECHANISM=SCRAM-SHA-512"
            echo "HOLDEM_KAFKA_SASL_USERNAME=operator"
            echo "HOLDEM_KAFKA_SASL_PASSWORD=$(compose_value HOLDEM_OPERATOR_PASSWORD operator-dev-only)"
        } >"$file.tmp"
    )
    mv "$file.tmp" "$file"
    echo "$file"
}

cmd="${1:-}"
shift || true
case "$cmd" in
    up)
        cd "$ROOT"
        # The ports first, before an engine is provisioned or an image built (an engine that
        # already answers tells which ports this project's own containers hold).
        if found="$("$HERE/engine.sh" env 2>/dev/null)"; then eval "$found"; export DOCKER_HOST; fi
        check_ports "$@"
        setup
        log "docker compose up --build --detach --wait (Kafka, topic-init, the four services, the auditor, Prometheus)"
        if ! docker compose up --build --detach --wait "$@"; then
            log "up failed: taking the stack down again (its volumes kept), so that no half of it runs"
            docker compose down >&2 || true
            exit 1
        fi
        # The images a rebuild replaced lost their tags to the new ones: dangling, removed.
        docker image prune --force --filter "label=com.docker.compose.project=${COMPOSE_PROJECT_NAME:-holdem}" >/dev/null || true
        operator_env="$(write_operator_env)"
        log "up: Kafka on 127.0.0.1:$(compose_value HOLDEM_KAFKA_PORT 29092) as the operator: set -a; . $operator_env; set +a"
        log "Prometheus on http://127.0.0.1:$(compose_value HOLDEM_PROMETHEUS_PORT 9090), the back office on http://127.0.0.1:$(compose_value HOLDEM_BACKOFFICE_PORT 8080)"
        log "your own docker CLI on this engine: eval \"\$(deploy/docker/engine.sh env)\""
        ;;
    down)
        cd "$ROOT"
        eval "$("$HERE/engine.sh" env)" || die "no Docker engine answers: nothing to take down"
        export DOCKER_HOST
        export HOLDEM_SECRETS_DIR="$SECRETS"
        docker compose down --volumes "$@"
        ;;
    build)
        setup >&2
        log "docker compose build (the stack's images)"
        docker compose build "$@" >&2
        ;;
    env)
        setup >&2
        print_env
        ;;
    *) echo "usage: stack.sh up|down|build|env [compose args]" >&2; exit 2 ;;
esac
