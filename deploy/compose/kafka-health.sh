#!/usr/bin/env bash
# The compose stack's Kafka health check, without a JVM (one per check used to pile up on small
# machines): an ApiVersions request (v0, which a SASL listener answers before authentication)
# sent over bash's /dev/tcp to the internal listener (or, with argument 9093, to the controller's
# listener, SASL too), healthy when the reply carries our correlation id and
# error code 0. Bash, head and od only (the upstream image and the stand-in).
set -euo pipefail
if [[ "${1:-9092}" == 9093 ]]; then exec 3<>/dev/tcp/127.0.0.1/9093; else exec 3<>/dev/tcp/127.0.0.1/9092; fi
# Size 12, then the header: api_key 18 (ApiVersions), api_version 0, correlation_id 0x484f4c44,
# client_id "hc".
printf '\x00\x00\x00\x0c\x00\x12\x00\x00\x48\x4f\x4c\x44\x00\x02hc' >&3
# The reply: its size (4 bytes), the correlation id (4), the error code (2).
reply="$(timeout 5 head -c 10 <&3 | od -An -tx1 | tr -d ' \n')"
exec 3<&-
[[ "${reply:8:12}" == "484f4c440000" ]] || { echo "unhealthy: ApiVersions reply '$reply'" >&2; exit 1; }
