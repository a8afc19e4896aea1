#!/usr/bin/env bash
# Base images where no image registry answers (air-gapped sites, our build machines), made from
# Debian's packages and the Kafka jars, never pulled:
#
#   base-images.sh build [python|kafka|prometheus|postgres ...]   build them (all by default) into the
#                         engine, print `export HOLDEM_*_IMAGE=...` lines for eval on stdout
#   base-images.sh env    print those lines for the images already built (exit 3 if one is missing)
#
#   holdem-base/python:3.11-bookworm  `debootstrap --variant=minbase bookworm` with python3,
#                         python3-venv and ca-certificates (Debian 12's python3 is 3.11), then
#                         `docker import`; stands in for python:3.11-slim (HOLDEM_PYTHON_IMAGE)
#   holdem-base/kafka:4.4.0           that base with Debian's openjdk-17-jre-headless and the
#                         broker classpath of deploy/kafka/pom.xml (`kafka.sh fetch`), laid out like
#                         apache/kafka (/opt/kafka/bin, /opt/kafka/libs; HOLDEM_KAFKA_IMAGE)
#   holdem-base/prometheus:debian     the prometheus server of Debian's package (provision.sh) on
#                         that base, run as nobody like prom/prometheus (HOLDEM_PROMETHEUS_IMAGE)
#   holdem-base/postgres:15-bookworm  Debian 12's postgresql-15 on that base, with postgres:15's
#                         first-start variables (postgres.Dockerfile; HOLDEM_POSTGRES_IMAGE)
#
# Needs root (debootstrap) and the Debian mirror; `apt-get install debootstrap` is done when
# missing. The debootstrap tarball is cached in HOLDEM_DOCKER_CACHE (default
# ~/.cache/holdem-docker), keyed by its package list, so a fresh clone imports it in seconds.
# Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian), DOCKER_HOST (eval
# "$(deploy/docker/engine.sh up)" first).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="${HOLDEM_DOCKER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/holdem-docker}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm
PACKAGES=python3,python3-venv,ca-certificates
PYTHON_IMAGE=holdem-base/python:3.11-bookworm
KAFKA_IMAGE=holdem-base/kafka:4.4.0
PROMETHEUS_IMAGE=holdem-base/prometheus:debian
POSTGRES_IMAGE=holdem-base/postgres:15-bookworm

log() { echo "base-images.sh: $*" >&2; }
die() { log "$*"; exit 1; }

have() { docker image inspect "$1" >/dev/null 2>&1; }

rootfs_tarball() {
    local key
    key="$(echo "$SUITE $PACKAGES $MIRROR" | sha256sum | cut -c1-12)"
    local tarball="$CACHE/debootstrap-$SUITE-$key.tar"
    mkdir -p "$CACHE"
    (
        flock 9
        [[ -s "$tarball" ]] && exit 0
        [[ "$(id -u)" == 0 ]] || die "debootstrap needs root"
        if ! command -v debootstrap >/dev/null; then
            log "installing debootstrap"
            apt-get install -y -qq debootstrap >&2 || { apt-get update -qq >&2 && apt-get install -y -qq debootstrap >&2; } ||
                die "apt-get install debootstrap failed"
        fi
        local work="$CACHE/rootfs.$$"
        rm -rf "$work"
        log "debootstrap --variant=minbase $SUITE ($PACKAGES) from $MIRROR (about a minute, once)"
        debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$work" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 ||
            { tail -n 20 "$CACHE/debootstrap.log" >&2; rm -rf "$work"; die "debootstrap failed (log: $CACHE/debootstrap.log)"; }
        # An image carries no package cache, no package lists and no docs.
        rm -rf "$work"/var/cache/apt/archives/*.deb "$work"/var/lib/apt/lists/* "$work"/usr/share/doc/* \
            "$work"/usr/share/man/* "$work"/usr/share/locale/* "$work"/var/log/*.log
        tar --numeric-owner -C "$work" -cf "$tarball.tmp" .
        mv "$tarball.tmp" "$tarball"
        rm -rf "$work"
    ) 9>"$CACHE/.debootstrap.lock"
    echo "$tarball"
}

build_python() {
    have "$PYTHON_IMAGE" && return 0
    local tarball
    tarball="$(rootfs_tarball)"
    log "docker import $tarball as $PYTHON_IMAGE"
    docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'CMD ["python3"]' \
        "$tarball" "$PYTHON_IMAGE" >/dev/null
}

build_kafka() {
    have "$KAFKA_IMAGE" && return 0
    build_python
    "$ROOT/deploy/kafka/kafka.sh" fetch
    # The broker's classpath has no admin tools; the health check's kafka-broker-api-versions
    # needs kafka-tools' one class (its dependencies are all on that classpath already).
    local tools="$CACHE/kafka-tools-4.4.0.jar"
    if [[ ! -s "$tools" ]]; then
        mvn -B -q -Djansi.noreset=true dependency:copy -Dartifact=org.apache.kafka:kafka-tools:4.4.0 \
            -DoutputDirectory="$CACHE" >&2 || die "fetching org.apache.kafka:kafka-tools:4.4.0 failed"
    fi
    log "building $KAFKA_IMAGE (Debian's openjdk-17-jre-headless + the jars of deploy/kafka/pom.xml)"
    # The legacy builder is enough here (no secret: Debian's mirror is plain http and signed);
    # the context is the jar folder plus the Dockerfile.
    local context
    context="$(mktemp -d)"
    cp -r "$ROOT/deploy/kafka/.cache/libs" "$context/libs"
    cp "$tools" "$context/libs/"
    cp "$ROOT/deploy/kafka/log4j2.properties" "$context/"
    cp "$HERE/kafka.Dockerfile" "$context/Dockerfile"
    DOCKER_BUILDKIT=0 docker build -q --force-rm --network host --build-arg BASE_IMAGE="$PYTHON_IMAGE" \
        -t "$KAFKA_IMAGE" "$context" >/dev/null || { rm -rf "$context"; die "building $KAFKA_IMAGE failed"; }
    rm -rf "$context"
}

build_prometheus() {
    have "$PROMETHEUS_IMAGE" && return 0
    build_python
    local bin
    bin="$("$ROOT/deploy/prometheus/provision.sh")"
    log "building $PROMETHEUS_IMAGE (Debian's prometheus $(cat "$bin/../VERSION"))"
    local context
    context="$(mktemp -d)"
    cp "$bin/prometheus" "$bin/promtool" "$context/"
    cp "$HERE/prometheus.Dockerfile" "$context/Dockerfile"
    DOCKER_BUILDKIT=0 docker build -q --force-rm --build-arg BASE_IMAGE="$PYTHON_IMAGE" \
        -t "$PROMETHEUS_IMAGE" "$context" >/dev/null || { rm -rf "$context"; die "building $PROMETHEUS_IMAGE failed"; }
    rm -rf "$context"
}

build_postgres() {
    have "$POSTGRES_IMAGE" && return 0
    build_python
    log "building $POSTGRES_IMAGE (Debian's postgresql-15)"
    local context
    context="$(mktemp -d)"
    cp "$HERE/postgres-start.sh" "$context/"
    cp "$HERE/postgres.Dockerfile" "$context/Dockerfile"
    DOCKER_BUILDKIT=0 docker build -q --force-rm --network host --build-arg BASE_IMAGE="$PYTHON_IMAGE" \
        -t "$POSTGRES_IMAGE" "$context" >/dev/null || { rm -rf "$context"; die "building $POSTGRES_IMAGE failed"; }
    rm -rf "$context"
}

exports() {
    echo "export HOLDEM_PYTHON_IMAGE=$PYTHON_IMAGE"
    echo "export HOLDEM_KAFKA_IMAGE=$KAFKA_IMAGE"
    echo "export HOLDEM_PROMETHEUS_IMAGE=$PROMETHEUS_IMAGE"
    echo "export HOLDEM_POSTGRES_IMAGE=$POSTGRES_IMAGE"
}

cmd="${1:-}"
shift || true
case "$cmd" in
    build)
        docker version >/dev/null 2>&1 || die "no Docker engine answers (eval \"\$(deploy/docker/engine.sh up)\" first)"
        [[ $# -gt 0 ]] || set -- python kafka prometheus postgres
        for image in "$@"; do
            case "$image" in
                python | kafka | prometheus | postgres) "build_$image" ;;
                *) die "unknown image: $image (python, kafka, prometheus, postgres)" ;;
            esac
        done
        exports
        ;;
    env)
        for image in "$PYTHON_IMAGE" "$KAFKA_IMAGE" "$PROMETHEUS_IMAGE" "$POSTGRES_IMAGE"; do
            have "$image" || { log "$image is not built (base-images.sh build)"; exit 3; }
        done
        exports
        ;;
    *) echo "usage: base-images.sh build [python|kafka|prometheus|postgres ...] | env" >&2; exit 2 ;;
esac
