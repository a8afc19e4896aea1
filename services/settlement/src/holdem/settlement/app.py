"""The settlement service: its decider wired into the shared runtime, and its entry point."""

from __future__ import annotations

from functools import partial
from typing import get_args

import structlog
from prometheus_client import CollectorRegistry, Counter

from holdem.core.contracts import Malfunction, Message, type_names
from holdem.runtime.app import ServiceApp, build_app, run
from holdem.runtime.logging import configure_logging
from holdem.runtime.processor import Spec
from holdem.runtime.snapshots import Codec
from holdem.runtime.transport import Transport
from holdem.settlement import snapshot
from holdem.settlement.decide import decide
from holdem.settlement.settings import SettlementSettings
from holdem.settlement.state import RoundsEvent, SettlementState, evolve, initial_state

NAME = "settlement"
log = structlog.get_logger(__name__)


class LateMalfunctions:
    """Counts and logs Malfunctions for rounds already settled: nothing is voided, SRE is told."""

    def __init__(self) -> None:
        self.counter: Counter | None = None  # the runtime's metric, bound once the app is built

    def __call__(self, state: SettlementState, message: Message, events: list[Message]) -> None:
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
        if self.counter is not None:
            self.counter.inc()


def settlement_spec(
    settings: SettlementSettings, on_handled: LateMalfunctions | None = None
) -> Spec[SettlementState]:
    """Settlement as the runtime sees it: reads and folds the rounds topic, owns no command."""
    return Spec[SettlementState](
        name=NAME,
        initial_state=partial(initial_state, settings.history_limit),
        evolve=evolve,
        decide=decide,
        inputs=("rounds",),
        state_roles=("rounds",),
        outputs=("rounds",),
        open_rounds=lambda state: state.open_rounds,
        on_handled=on_handled,
        snapshot=Codec(snapshot.dump_state, snapshot.load_state),
        reads=type_names(*get_args(RoundsEvent)),
    )


def create_app(
    settings: SettlementSettings,
    *,
    transport: Transport | None = None,
    registry: CollectorRegistry | None = None,
) -> ServiceApp:
    """Settlement's faststream app; ``transport`` for tests (default: Kafka)."""
    late = LateMalfunctions()
    spec = settlement_spec(settings, late)
    service = build_app(spec, settings, transport=transport, registry=registry)
    late.counter = service.processor.metrics.late_malfunctions
    return service


def main() -> None:
    """``holdem-settlement``: run the service until SIGINT/SIGTERM, serving /metrics."""
    settings = SettlementSettings()
    configure_logging(NAME, settings.log_level)
    run(create_app(settings))
