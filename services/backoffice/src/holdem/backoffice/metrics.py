"""The back office's Prometheus metrics: projection lag and throughput, web request latency."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from holdem.core import manifest

LAG = Gauge(
    "holdem_backoffice_projection_lag_records",
    "records between the projection's stored position and the partition's last stable offset",
    ["topic", "partition"],
)
ROWS = Counter("holdem_backoffice_projection_rows_total", "rows written by the projection")
RECORDS = Counter(
    "holdem_backoffice_projection_records_total", "records projected", ["topic", "outcome"]
)
BATCH_SECONDS = Histogram(
    "holdem_backoffice_projection_batch_seconds",
    "time to write one poll batch and its positions (one transaction)",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0),
)
LAST_COMMIT = Gauge(
    "holdem_backoffice_projection_last_commit_timestamp_seconds",
    "when the projection last committed a batch (unix time)",
)
REQUEST_SECONDS = Histogram(
    "holdem_backoffice_request_seconds",
    "web back office request latency",
    ["route", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
BUILD_INFO = Gauge(
    "holdem_build_info",
    "1, labelled with the release and the digest of its certified parts' manifest "
    "(holdem.core.manifest: what decides an outcome)",
    ["service", "version", "manifest"],
)


def announce_build(service: str) -> None:
    """Set ``holdem_build_info`` for this back office process (projection or web)."""
    BUILD_INFO.labels(service, manifest.release_version(), manifest.installed_digest()).set(1)
