#!/usr/bin/env bash
# promtool and the prometheus server from Debian's `prometheus` package, unpacked into a
# project-local cache without root (apt-get download + dpkg-deb -x); prints the folder of both.
#
#   provision.sh            fetch once, then print e.g. /repo/deploy/prometheus/.cache/bin
#
# Environment: PROMETHEUS_CACHE_DIR (default deploy/prometheus/.cache). The tests and
# `make check-rules` run the binaries from the printed folder; nothing on PATH is used.
# Only the Debian package lists are needed (root refreshes them itself; anyone else is told how).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${PROMETHEUS_CACHE_DIR:-$HERE/.cache}"
BIN="$CACHE/bin"
PACKAGE=prometheus

log() { echo "provision.sh: $*" >&2; }
die() { log "$*"; exit 1; }

cached() { [[ -x "$BIN/promtool" && -x "$BIN/prometheus" && -f "$CACHE/VERSION" ]]; }

# The version apt would download: empty when the package lists are missing or stale.
candidate() { apt-cache policy "$PACKAGE" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -v '^(none)$' || true; }

fetch() {
    command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null ||
        die "apt-get/dpkg-deb not found: this provisions Debian's $PACKAGE package; on another system put promtool and prometheus 2.x in $BIN and write their version to $CACHE/VERSION"
    local version
    version="$(candidate)"
    if [[ -z "$version" && "$(id -u)" == 0 ]]; then
        log "no $PACKAGE in the package lists: apt-get update"
        apt-get update -qq >&2 || die "apt-get update failed"
        version="$(candidate)"
    fi
    [[ -n "$version" ]] ||
        die "Debian's package lists have no $PACKAGE: run \`sudo apt-get update\` once, then this again"
    log "fetching Debian's $PACKAGE $version into $CACHE (promtool and the server only)"
    local work="$CACHE/tmp.$$"
    rm -rf "$work" && mkdir -p "$work/root"
    # apt-get download needs no root; it writes the .deb into the current folder. As root it would
    # hand the download to the _apt user, who cannot write here: root downloads it itself.
    local sandbox=()
    [[ "$(id -u)" != 0 ]] || sandbox=(-o APT::Sandbox::User=root)
    (cd "$work" && apt-get download -q "${sandbox[@]}" "$PACKAGE=$version" >&2) ||
        die "apt-get download $PACKAGE=$version failed (see above)"
    dpkg-deb -x "$work"/"$PACKAGE"_*.deb "$work/root"
    mkdir -p "$work/bin"
    cp "$work/root/usr/bin/promtool" "$work/root/usr/bin/prometheus" "$work/bin/"
    "$work/bin/promtool" --version >/dev/null 2>&1 || die "the unpacked promtool does not run"
    rm -rf "$BIN" && mv "$work/bin" "$BIN"
    echo "$version" >"$CACHE/VERSION"
    rm -rf "$work"
}

mkdir -p "$CACHE"
# One fetch at a time (test sessions and make may start together); the subshell holds the lock.
(
    flock 9
    cached || fetch
) 9>"$CACHE/.lock"
echo "$BIN"
