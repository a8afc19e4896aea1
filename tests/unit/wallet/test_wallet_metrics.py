"""The wallet's own counters: each refusal counted once, protection by reason and limit."""

from __future__ import annotations

from prometheus_client import CollectorRegistry
from support.messages import envelope

from holdem.core.contracts import (
    BetRejected,
    Envelope,
    LimitKind,
    OperatorRefusal,
    ProtectionRefusal,
    Reason,
    WalletRejected,
)
from holdem.runtime.metrics import Metrics
from holdem.wallet.metrics import WalletCounters


def counted(*events: Envelope) -> CollectorRegistry:
    registry = CollectorRegistry()
    counters = WalletCounters(Metrics(registry))
    for event in events:
        counters.observe(event)
    return registry


def value(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, labels) or 0.0


def test_a_refused_bet_is_counted_once_although_two_events_say_so() -> None:
    registry = counted(
        BetRejected(**envelope(round_id="r1"), command_id="c1", reason=Reason.BELOW_MINIMUM),
        WalletRejected(
            **envelope(round_id="r1"),
            command_id="c1",
            command_type="command.place_bet",
            reason=Reason.BELOW_MINIMUM,
        ),
    )
    assert value(registry, "holdem_rejected_total", service="wallet", reason="below_minimum") == 1


def test_protection_refusals_are_counted_by_reason_and_limit_not_the_operators_own() -> None:
    def refused(reason: object, **fields: object) -> BetRejected:
        return BetRejected(**envelope(round_id="r1"), command_id="c1", reason=reason, **fields)

    registry = counted(
        refused(ProtectionRefusal.LIMIT_REACHED, limit=LimitKind.LOSS_PER_DAY),
        refused(ProtectionRefusal.LIMIT_REACHED, limit=LimitKind.LOSS_PER_DAY),
        refused(ProtectionRefusal.LIMIT_REACHED, limit=LimitKind.SESSION_LENGTH),
        refused(OperatorRefusal.PLAYER_BLOCKED, detail="the operator blocked the player"),
        refused(OperatorRefusal.PLAYER_BLOCKED, detail="operator wallet: player_blocked"),
    )

    def count(reason: str, limit: str = "") -> float:
        return value(registry, "holdem_protection_refusals_total", reason=reason, limit=limit)

    assert count("limit_reached", "loss_per_day") == 2
    assert count("limit_reached", "session_length") == 1
    assert count("player_blocked") == 1  # the seamless operator's refusal is not ours
    assert value(registry, "holdem_rejected_total", service="wallet", reason="player_blocked") == 2
