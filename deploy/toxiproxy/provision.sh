#!/usr/bin/env bash
# Shopify's toxiproxy (a TCP proxy whose connections can be slowed, stalled or reset through an
# HTTP API) for the network-fault tests: the kernel here has no netem, so the faults are made in
# user space. Built once from the Go module proxy at a pinned version into a git-ignored cache,
# then the binary's path is printed (the tests run it from there; nothing on PATH is used).
#
#   provision.sh            build once (about 20 s), then print e.g. deploy/toxiproxy/.cache/v2.12.0/server
#
# Environment: TOXIPROXY_CACHE_DIR (default deploy/toxiproxy/.cache), TOXIPROXY_VERSION (the
# pinned v2.12.0 unless told). Needs a Go toolchain (1.23+) and the module proxy; fails, with one
# line naming what is missing, otherwise.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${TOXIPROXY_CACHE_DIR:-$HERE/.cache}"
VERSION="${TOXIPROXY_VERSION:-v2.12.0}"
MODULE="github.com/Shopify/toxiproxy/v2/cmd/server"
BIN="$CACHE/$VERSION/server"

log() { echo "provision.sh: $*" >&2; }
die() { log "$*"; exit 1; }

# The binary says its version (-version): a half-written or foreign file is not taken for it.
cached() { [[ -x "$BIN" ]] && "$BIN" -version 2>&1 | grep -q "${VERSION#v}"; }

build() {
    command -v go >/dev/null ||
        die "toxiproxy $VERSION is not built and there is no Go toolchain to build it (go install $MODULE@$VERSION)"
    log "building toxiproxy $VERSION from the Go module proxy (once, about 20 s; cached in $CACHE)"
    local work="$CACHE/tmp.$$"
    rm -rf "$work" && mkdir -p "$work"
    # A release's own ldflags are not applied by go install: -X sets the version it reports.
    GOBIN="$work" GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod" \
        go install -ldflags "-X github.com/Shopify/toxiproxy/v2.Version=${VERSION#v}" \
        "$MODULE@$VERSION" >&2 || { rm -rf "$work"; die "go install $MODULE@$VERSION failed (see above)"; }
    mkdir -p "$(dirname "$BIN")"
    mv -f "$work/server" "$BIN"  # whole, so an interrupted build never looks complete
    rm -rf "$work"
    cached || die "the built $BIN does not report version $VERSION"
}

mkdir -p "$CACHE"
# One build at a time (test sessions and make may start together); the subshell holds the lock.
(
    flock 9
    cached || build
) 9>"$CACHE/.lock"
echo "$BIN"
