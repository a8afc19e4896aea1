#!/usr/bin/env bash
# Upstream's promtool v3 (Prometheus 3.1.0: Go module github.com/prometheus/prometheus v0.301.0),
# built once from the Go module proxy into a cache folder; prints that folder. The Debian package
# provision.sh unpacks is 2.42.0, the compose stack's stand-in; prom/prometheus:v3.1.0 is what
# runs wherever a registry answers, so `make check-rules-v3` checks the rules against both.
#
#   provision-v3.sh          build once (several minutes), then print e.g. ~/.cache/holdem-promtool/v0.301.0
#
# Environment: HOLDEM_PROMTOOL_CACHE (default ~/.cache/holdem-promtool). Needs a Go toolchain.
# `go install pkg@version` refuses this module (its go.mod has replace directives), so the module
# is downloaded and built in place.
set -euo pipefail

VERSION=v0.301.0
CACHE="${HOLDEM_PROMTOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/holdem-promtool}"
BIN="$CACHE/$VERSION"

log() { echo "provision-v3.sh: $*" >&2; }
die() { log "$*"; exit 1; }

build() {
    command -v go >/dev/null || die "no Go toolchain: promtool v3 is built from the Go module proxy"
    local dir
    dir="$(go mod download -json "github.com/prometheus/prometheus@$VERSION" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')" ||
        die "go mod download github.com/prometheus/prometheus@$VERSION failed"
    log "building promtool $VERSION (Prometheus 3.1.0) from the Go module proxy (once; cached in $BIN)"
    mkdir -p "$BIN"
    (cd "$dir" && GOFLAGS=-mod=mod go build -o "$BIN/promtool.tmp" ./cmd/promtool) >&2 ||
        die "go build of promtool $VERSION failed"
    mv "$BIN/promtool.tmp" "$BIN/promtool"
}

mkdir -p "$CACHE"
(
    flock 9
    [[ -x "$BIN/promtool" ]] || build
) 9>"$CACHE/.lock"
"$BIN/promtool" --version >/dev/null 2>&1 || die "$BIN/promtool does not run"
echo "$BIN"
