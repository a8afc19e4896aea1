"""The dealer's own counters (names are a contract with deploy/prometheus and Grafana): the
rounds it voids, by reason, and the commands it refuses. The runtime counts the pipeline."""

from __future__ import annotations

from holdem.core.contracts import CommandRejected, Envelope, RoundVoided
from holdem.runtime.metrics import GameCounters, Metrics


class DealerCounters(GameCounters):
    """Counted from what the dealer publishes (``Spec.counters``)."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self.rounds = metrics.counter("holdem_rounds", "Rounds ended, by outcome", ["outcome"])
        self.voids = metrics.counter("holdem_voids", "Rounds voided, by reason", ["reason"])

    def observe(self, event: Envelope) -> None:
        if isinstance(event, RoundVoided):
            self.rounds.labels("voided").inc()
            self.voids.labels(event.reason.split(":")[0][:40]).inc()
        elif isinstance(event, CommandRejected):
            self.metrics.rejected.labels("dealer", event.reason.value).inc()
