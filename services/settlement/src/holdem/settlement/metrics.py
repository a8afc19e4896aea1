"""Settlement's own counters (names are a contract with deploy/prometheus and Grafana): rounds
by outcome, what was staked and returned on each bet, the rounds it voids, and the malfunctions
reported for rounds already settled. The runtime counts the pipeline."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import structlog

from holdem.core.contracts import Envelope, Malfunction, Mode, RoundVoided, Settled
from holdem.runtime.metrics import GameCounters, Metrics

log = structlog.get_logger(__name__)


class SettlementCounters(GameCounters):
    """Counted from what settlement publishes and the malfunctions it is told of
    (``Spec.counters``)."""

    def __init__(self, metrics: Metrics) -> None:
        counter = metrics.counter
        self.rounds = counter("holdem_rounds", "Rounds ended, by outcome", ["outcome"])
        self.wagered = counter(
            "holdem_wagered_minor", "Stakes settled, minor units", ["bet", "currency"]
        )
        self.returned = counter(
            "holdem_returned_minor", "Returns paid incl. stake, minor units", ["bet", "currency"]
        )
        self.voids = counter("holdem_voids", "Rounds voided, by reason", ["reason"])
        self.late_malfunctions = counter(
            "holdem_malfunction_after_settlement", "Malfunctions for settled rounds", []
        )

    def observe(self, event: Envelope) -> None:
        if isinstance(event, Settled) and event.mode is Mode.FUN:
            return  # play money: never in the rounds, stakes, returns or RTP (ADR 018)
        if isinstance(event, Settled):
            self.rounds.labels(event.result).inc()
            for bet, stake, ret in (
                ("ante", event.ante, event.ante_return),
                ("call", event.call, event.call_return),
                ("aa_bonus", event.aa_bonus, event.bonus_return),
            ):
                self.wagered.labels(bet, event.currency).inc(stake)
                self.returned.labels(bet, event.currency).inc(ret)
        elif isinstance(event, RoundVoided):
            self.rounds.labels("voided").inc()
            self.voids.labels(event.reason.split(":")[0][:40]).inc()

    def handled(self, state: Any, message: Any, events: Sequence[Envelope]) -> None:
        """A Malfunction for a round already settled: nothing is voided, SRE is told."""
        if not isinstance(message, Malfunction) or events or message.refuses_settled():
            return  # the wallet's refusals have their own metric
        round_ = state.round(message.player_id, message.round_id)
        if round_ is None or round_.status != "settled":
            return
        log.warning(
            "malfunction after settlement",
            round_id=message.round_id,
            player_id=message.player_id,
            source=message.source,
            reason=message.reason,
        )
        self.late_malfunctions.inc()
