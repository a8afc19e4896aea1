#!/bin/sh
# Inside an image build: run a command that downloads with the base's CA bundle plus the extra
# certificates of the BuildKit secret `ca` (/run/secrets/ca, mounted only for that step), so a
# proxy that re-signs TLS is trusted and no certificate ends in a layer. The bundle is written
# to a temporary file removed before the step ends.
set -eu
bundle="$(mktemp)"
trap 'rm -f "$bundle"' EXIT
cat /etc/ssl/certs/ca-certificates.crt >"$bundle" 2>/dev/null || true
if [ -s /run/secrets/ca ]; then cat /run/secrets/ca >>"$bundle"; fi
SSL_CERT_FILE="$bundle" PIP_CERT="$bundle" REQUESTS_CA_BUNDLE="$bundle" "$@"
