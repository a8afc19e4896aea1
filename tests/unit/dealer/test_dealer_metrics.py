"""The dealer's own counters: the rounds it voids, by reason, and the commands it refuses."""

from __future__ import annotations

from prometheus_client import CollectorRegistry
from support.messages import envelope

from holdem.core.contracts import CommandRejected, Reason, RoundVoided
from holdem.dealer.metrics import DealerCounters
from holdem.runtime.metrics import Metrics


def test_a_voided_round_is_counted_by_outcome_and_reason_a_refusal_by_reason() -> None:
    registry = CollectorRegistry()
    counters = DealerCounters(Metrics(registry))
    counters.observe(
        RoundVoided(**envelope(round_id="r1"), malfunction_id="m1", reason="watchdog: stuck")
    )
    counters.observe(
        CommandRejected(
            **envelope(round_id="r1"),
            command_id="c1",
            command_type="command.call",
            reason=Reason.UNKNOWN_ROUND,
        )
    )

    def value(name: str, **labels: str) -> float:
        return registry.get_sample_value(name, labels) or 0.0

    assert value("holdem_rounds_total", outcome="voided") == 1
    assert value("holdem_voids_total", reason="watchdog") == 1
    assert value("holdem_rejected_total", service="dealer", reason="unknown_round") == 1
