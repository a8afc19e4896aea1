"""The runtime's metrics are the pipeline's: what was published, its latency, the dead letters;
the game's counters are each service's own (tests/unit/*/test_*_metrics.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from prometheus_client import CollectorRegistry
from support.messages import command, envelope

from holdem.core.contracts import MessageRejected, PlaceBet, Reason
from holdem.runtime.metrics import Metrics

NOW = datetime(2026, 1, 1, tzinfo=UTC)
GAME_FAMILIES = {
    "holdem_rounds", "holdem_wagered_minor", "holdem_returned_minor", "holdem_voids",
    "holdem_protection_refusals", "holdem_malfunction_after_settlement",
    "holdem_settlement_mismatch", "holdem_free_hands_played", "holdem_promo_paid_minor",
    "holdem_promo_refunded_minor", "holdem_free_hand_payouts_minor",
}  # fmt: skip


def value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


def dead_letter(reason: Reason) -> MessageRejected:
    return MessageRejected(
        **envelope(),
        service="wallet",
        reason=reason,
        detail="x",
        source_topic="holdem.commands",
        source_partition=0,
        source_offset=7,
        raw="{",
        raw_base64="ew==",
        raw_size=1,
    )


def test_a_dead_letter_is_counted_as_a_refusal_and_a_dead_letter_with_its_latency() -> None:
    registry = CollectorRegistry()
    bet = command(PlaceBet, round_id="r1", currency="EUR", ante=1, occurred_at=NOW)
    Metrics(registry).observe(
        "wallet", bet, [dead_letter(Reason.MALFORMED)], NOW + timedelta(milliseconds=20)
    )
    assert value(registry, "holdem_rejected_total", service="wallet", reason="malformed") == 1
    assert value(registry, "holdem_dead_letters_total", service="wallet", reason="malformed") == 1
    latency = "holdem_command_latency_seconds_count"
    assert value(registry, latency, service="wallet", type="command.place_bet") == 1


def test_events_of_a_periodic_decision_are_counted_without_a_latency() -> None:
    registry = CollectorRegistry()
    assert Metrics(registry).observe_events("wallet", [dead_letter(Reason.INVALID)])
    published = "holdem_events_published_total"
    assert value(registry, published, service="wallet", type="rejected.message") == 1
    assert value(registry, "holdem_command_latency_seconds_count", service="wallet") == 0
    assert not Metrics(CollectorRegistry()).observe_events("wallet", [])


def test_the_runtime_registers_no_counter_of_the_game() -> None:
    registry = CollectorRegistry()
    Metrics(registry)
    families = {family.name for family in registry.collect()}
    assert families and not families & GAME_FAMILIES
