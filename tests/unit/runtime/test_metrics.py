"""Domain metrics are derived from what a decision published, each fact counted once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from prometheus_client import CollectorRegistry
from support.messages import command, envelope

from holdem.core.contracts import (
    BetRejected,
    LimitKind,
    OperatorRefusal,
    PlaceBet,
    ProtectionRefusal,
    Reason,
    RoundVoided,
    Settled,
    WalletRejected,
)
from holdem.runtime.metrics import Metrics

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


def test_a_refused_bet_is_counted_once_although_two_events_say_so() -> None:
    registry = CollectorRegistry()
    bet = command(PlaceBet, round_id="r1", currency="EUR", ante=1, occurred_at=NOW)
    refusals = [
        BetRejected(
            **envelope(round_id="r1"), command_id=bet.command_id, reason=Reason.BELOW_MINIMUM
        ),
        WalletRejected(
            **envelope(round_id="r1"),
            command_id=bet.command_id,
            command_type="command.place_bet",
            reason=Reason.BELOW_MINIMUM,
        ),
    ]
    Metrics(registry).observe("wallet", bet, refusals, NOW + timedelta(milliseconds=20))
    assert value(registry, "holdem_rejected_total", service="wallet", reason="below_minimum") == 1
    assert (
        value(
            registry,
            "holdem_command_latency_seconds_count",
            service="wallet",
            type="command.place_bet",
        )
        == 1
    )


def test_a_settled_round_counts_its_outcome_and_each_bet_wagered_and_returned() -> None:
    registry = CollectorRegistry()
    settled = Settled(
        **envelope(round_id="r1"),
        currency="EUR",
        decision="call",
        result="win",
        dealer_qualifies=True,
        ante=100,
        aa_bonus=50,
        call=200,
        ante_return=200,
        call_return=400,
        bonus_return=0,
        total_return=600,
        player_category="pair",
        dealer_category="pair",
        bonus_category="high_card",
        bonus_class="none",
    )
    Metrics(registry).observe("settlement", settled, [settled], NOW)
    assert value(registry, "holdem_rounds_total", outcome="win") == 1
    assert value(registry, "holdem_wagered_minor_total", bet="call", currency="EUR") == 200
    assert value(registry, "holdem_returned_minor_total", bet="ante", currency="EUR") == 200
    assert value(registry, "holdem_returned_minor_total", bet="aa_bonus", currency="EUR") == 0
    assert value(registry, "holdem_wagered_minor_total", bet="aa_bonus", currency="EUR") == 50


def test_events_of_a_periodic_decision_are_counted_without_a_latency() -> None:
    registry = CollectorRegistry()
    voided = RoundVoided(**envelope(round_id="r1"), malfunction_id="m1", reason="watchdog: stuck")
    assert Metrics(registry).observe_events("dealer", [voided])
    assert value(registry, "holdem_rounds_total", outcome="voided") == 1
    assert value(registry, "holdem_voids_total", reason="watchdog") == 1
    assert (
        value(registry, "holdem_events_published_total", service="dealer", type="round.voided") == 1
    )


def test_protection_refusals_are_counted_by_reason_and_limit_not_the_operators_own() -> None:
    registry = CollectorRegistry()

    def refused(reason: object, **fields: object) -> BetRejected:
        return BetRejected(**envelope(round_id="r1"), command_id="c1", reason=reason, **fields)

    Metrics(registry).observe_events(
        "wallet",
        [
            refused(ProtectionRefusal.LIMIT_REACHED, limit=LimitKind.LOSS_PER_DAY),
            refused(ProtectionRefusal.LIMIT_REACHED, limit=LimitKind.LOSS_PER_DAY),
            refused(ProtectionRefusal.LIMIT_REACHED, limit=LimitKind.SESSION_LENGTH),
            refused(OperatorRefusal.PLAYER_BLOCKED, detail="the operator blocked the player"),
            refused(OperatorRefusal.PLAYER_BLOCKED, detail="operator wallet: player_blocked"),
        ],
    )

    def count(reason: str, limit: str = "") -> float:
        return value(registry, "holdem_protection_refusals_total", reason=reason, limit=limit)

    assert count("limit_reached", "loss_per_day") == 2
    assert count("limit_reached", "session_length") == 1
    assert count("player_blocked") == 1  # the seamless operator's refusal is not ours
    assert value(registry, "holdem_rejected_total", service="wallet", reason="player_blocked") == 2
