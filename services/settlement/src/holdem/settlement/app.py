"""The settlement service: its decider wired into the shared runtime, and its entry point."""

from __future__ import annotations

from functools import partial
from typing import get_args

from prometheus_client import CollectorRegistry

from holdem.core.contracts import type_names
from holdem.core.contracts.rounds import broken_round
from holdem.runtime.app import ServiceApp, build_app, run
from holdem.runtime.logging import configure_logging
from holdem.runtime.processor import Spec
from holdem.runtime.snapshots import Codec
from holdem.runtime.transport import Transport
from holdem.settlement import snapshot
from holdem.settlement.decide import decide
from holdem.settlement.metrics import SettlementCounters
from holdem.settlement.settings import SettlementSettings
from holdem.settlement.state import (
    RoundsEvent,
    SettlementState,
    evolve,
    evolve_own,
    initial_state,
)

NAME = "settlement"


def settlement_spec(settings: SettlementSettings) -> Spec[SettlementState]:
    """Settlement as the runtime sees it: reads and folds the rounds topic, owns no command."""
    return Spec[SettlementState](
        name=NAME,
        initial_state=partial(initial_state, settings.history_limit),
        evolve=evolve,
        evolve_own=evolve_own,  # its own Settled is not recomputed (a Settled from the log is)
        decide=decide,
        inputs=("rounds",),
        state_roles=("rounds",),
        outputs=("rounds",),
        open_rounds=lambda state: state.open_rounds,
        counters=SettlementCounters,
        on_failure=broken_round(NAME),
        snapshot=Codec(snapshot.dump_state, snapshot.load_state),
        reads=type_names(*get_args(RoundsEvent)),
    )


def create_app(
    settings: SettlementSettings,
    *,
    transport: Transport | None = None,
    registry: CollectorRegistry | None = None,
) -> ServiceApp:
    """Settlement's app (holdem.runtime.app); ``transport`` for tests (default: Kafka)."""
    spec = settlement_spec(settings)
    return build_app(spec, settings, transport=transport, registry=registry)


def main() -> None:
    """``holdem-settlement``: run the service until SIGINT/SIGTERM, serving /metrics."""
    settings = SettlementSettings()
    configure_logging(NAME, settings.log_level)
    run(create_app(settings))
