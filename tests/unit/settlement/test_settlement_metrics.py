"""Settlement's own counters: a settled round's outcome and each bet's stake and return."""

from __future__ import annotations

from prometheus_client import CollectorRegistry
from support.messages import envelope

from holdem.core.contracts import Settled
from holdem.runtime.metrics import Metrics
from holdem.settlement.metrics import SettlementCounters


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
    SettlementCounters(Metrics(registry)).observe(settled)

    def value(name: str, **labels: str) -> float:
        return registry.get_sample_value(name, labels) or 0.0

    assert value("holdem_rounds_total", outcome="win") == 1
    assert value("holdem_wagered_minor_total", bet="call", currency="EUR") == 200
    assert value("holdem_returned_minor_total", bet="ante", currency="EUR") == 200
    assert value("holdem_returned_minor_total", bet="aa_bonus", currency="EUR") == 0
    assert value("holdem_wagered_minor_total", bet="aa_bonus", currency="EUR") == 50
