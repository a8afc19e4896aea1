"""Prometheus metrics of the pipeline (names are a contract with deploy/prometheus and Grafana):
batches, records, lag, replays, snapshots, events published, dead letters, refusals, latency,
readiness. The game's counters (rounds, stakes, promotions, ...) are each service's own
(``holdem.<service>.metrics``): a service hands them to the runtime once, in its Spec
(``Spec.counters``), and the runtime shows them every event the service publishes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from holdem.core import manifest
from holdem.core.contracts.base import Envelope
from holdem.core.contracts.rejected import MessageRejected


class Children:
    """A labelled metric's children, each looked up once: ``labels()`` takes a lock and builds
    a key on every call, and the pipeline counts every event it publishes (issue 28). For
    families whose children are never removed."""

    def __init__(self, metric: Any) -> None:
        self.metric = metric
        self._children: dict[tuple[str, ...], Any] = {}

    def __call__(self, *labels: str) -> Any:
        child = self._children.get(labels)
        if child is None:
            child = self._children[labels] = self.metric.labels(*labels)
        return child


class Metrics:
    """The pipeline metrics of one process; every service registers the same families."""

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self.registry = registry
        counter = self.counter
        # Refusals of inputs, by service and reason: the runtime counts its dead letters here,
        # and each service's counters its own refusals (holdem.<service>.metrics).
        self.rejected = counter("holdem_rejected", "Inputs refused", ["service", "reason"])
        self.dead_letters = counter(
            "holdem_dead_letters",
            "Records put on the dead-letter topic (unreadable, refused or failed), by reason",
            ["service", "reason"],
        )
        self.published = counter("holdem_events_published", "Events published", ["service", "type"])
        self.open_rounds = Gauge(
            "holdem_open_rounds", "Rounds not yet ended", ["service"], registry=registry
        )
        self.latency = Histogram(
            "holdem_command_latency_seconds",
            "From an input's occurred_at to its events being published",
            ["service", "type"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=registry,
        )
        self._published = Children(self.published)
        self._rejected = Children(self.rejected)
        self._dead_letters = Children(self.dead_letters)
        self._latency = Children(self.latency)
        self.replay_duration = Histogram(
            "holdem_replay_duration_seconds",
            "Time to rebuild state from the log",
            ["service"],
            buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 120),
            registry=registry,
        )
        self.replay_events = counter(
            "holdem_replay_events", "Events folded in replays", ["service"]
        )
        self.records = counter(
            "holdem_records_consumed",
            "Records read from input topics (skipped ones too)",
            ["service"],
        )
        self.batches = counter("holdem_batches", "Poll batches committed", ["service"])
        self.snapshots = counter("holdem_snapshots", "Partition snapshots written", ["service"])
        self.snapshot_seconds = Histogram(
            "holdem_snapshot_seconds",
            "A partition's snapshot dump: the time it held the event loop (its batch's records "
            "commit after it)",
            ["service"],
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
            registry=registry,
        )
        self.snapshot_bytes = counter(
            "holdem_snapshot_bytes", "Bytes of snapshot records written", ["service"]
        )
        self.snapshot_failures = counter(
            "holdem_snapshot_failures",
            "Snapshots that could not be loaded (full replay)",
            ["service"],
        )
        self.lag = Gauge(
            "holdem_consumer_lag",
            "Records behind the partition end",
            ["service", "topic", "partition"],
            registry=registry,
        )
        # Read at each scrape (Gauge.set_function): what a container's health check asks.
        self.ready = Gauge(
            "holdem_ready",
            "1 when this instance decides: a member of its group, the state of every assigned "
            "partition rebuilt",
            ["service"],
            registry=registry,
        )
        self.build_info = Gauge(
            "holdem_build_info",
            "1, labelled with the release and the digest of its certified parts' manifest "
            "(holdem.core.manifest: what decides an outcome)",
            ["service", "version", "manifest"],
            registry=registry,
        )
        self.duplicate_instance = Gauge(
            "holdem_duplicate_instance",
            "1 while another live member of the group uses this instance's HOLDEM_INSTANCE_ID "
            "(holdem.runtime.twins, ADR 034)",
            ["service"],
            registry=registry,
        )

        self.started = Gauge(
            "holdem_started_seconds",
            "Unix time this instance's process started: each change is a restart (alert "
            "HoldemRestartLoop, ADR 037)",
            ["service"],
            registry=registry,
        )

    def announce_build(self, service: str) -> None:
        """Set ``holdem_build_info`` for ``service`` (which certified build this process runs)
        and ``holdem_started_seconds`` (when it started)."""
        self.build_info.labels(
            service, manifest.release_version(), manifest.installed_digest()
        ).set(1)
        self.started.labels(service).set(time.time())

    def counter(self, name: str, doc: str, labels: Iterable[str]) -> Counter:
        """A counter in this process's registry (the services' own counters use it too)."""
        return Counter(name, doc, list(labels), registry=self.registry)

    def observe(
        self, service: str, cause: Envelope, events: Iterable[Envelope], now: datetime
    ) -> None:
        """Count what one decision published, and its latency from the input."""
        if self.observe_events(service, events):
            seconds = (now - cause.occurred_at).total_seconds()  # type: ignore[attr-defined]
            self._latency(service, cause.type).observe(max(seconds, 0.0))  # type: ignore[attr-defined]

    def observe_events(self, service: str, events: Iterable[Envelope]) -> bool:
        """Count published events (also those of periodic decisions); True if there were any."""
        any_event = False
        for event in events:
            any_event = True
            self._published(service, event.type).inc()  # type: ignore[attr-defined]
            if isinstance(event, MessageRejected):
                self._rejected(service, event.reason.value).inc()
                self._dead_letters(service, event.reason.value).inc()
        return any_event


class GameCounters:
    """A service's own counters (its game facts), built once from the process's ``Metrics``
    (``Spec.counters``) and shown what the service does. The base counts nothing."""

    def observe(self, event: Envelope) -> None:
        """One event the service published (decided, ticked or dead-lettered)."""

    def handled(self, state: Any, message: Any, events: Sequence[Envelope]) -> None:
        """One input decided on, with the state it was decided on and what it published."""


CountersFactory = Callable[[Metrics], GameCounters]
