"""The dealer service: its decider wired into the shared runtime, and its entry point."""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry

from holdem.core.contracts import Message
from holdem.core.decider import Context
from holdem.core.deck import new_salt, shuffle
from holdem.core.strategy import optimal_table
from holdem.dealer.context import DeckSource, Table, Tick, TimeoutPolicy
from holdem.dealer.decide import bind
from holdem.dealer.settings import DealerSettings
from holdem.dealer.state import DealerState, evolve, initial_state
from holdem.runtime.app import ServiceApp, build_app, run
from holdem.runtime.logging import configure_logging
from holdem.runtime.processor import Spec

NAME = "dealer"
OWNED_COMMANDS = frozenset({"command.call", "command.fold", "command.void_round"})


def csprng_deck() -> tuple[Sequence[int], bytes]:
    """The production deck source: the core's Fisher–Yates shuffle and salt, from ``secrets``."""
    return shuffle(), new_salt()


def dealer_spec(
    table: Table, tick_interval_s: float = 1.0, new_deck: DeckSource = csprng_deck
) -> Spec[DealerState]:
    """The dealer as the runtime sees it: reads commands and rounds, folds rounds and its vault."""
    decide_at_table = bind(table, new_deck)

    def tick(state: DealerState, ctx: Context) -> list[Message]:
        return decide_at_table(state, Tick(ctx.now), ctx)

    return Spec[DealerState](
        name=NAME,
        initial_state=initial_state,
        evolve=evolve,
        decide=decide_at_table,
        inputs=("commands", "rounds"),
        state_roles=("rounds", "vault"),
        outputs=("rounds", "vault"),
        commands=OWNED_COMMANDS,
        rejects_unreadable=frozenset({"rounds"}),
        tick=tick,
        tick_interval_s=tick_interval_s,
        open_rounds=lambda state: len(state.open),
    )


def create_app(
    settings: DealerSettings,
    *,
    in_memory: bool = False,
    registry: CollectorRegistry | None = None,
    new_deck: DeckSource = csprng_deck,
) -> ServiceApp:
    """The dealer's faststream app; ``in_memory=True`` for TestKafkaBroker, ``new_deck`` for
    tests that need known cards."""
    spec = dealer_spec(settings.table, settings.watchdog_interval_s, new_deck)
    return build_app(spec, settings, in_memory=in_memory, registry=registry)


def main() -> None:
    """``holdem-dealer``: run the service until SIGINT/SIGTERM, serving /metrics."""
    settings = DealerSettings()
    configure_logging(NAME, settings.log_level)
    if settings.timeout_policy is TimeoutPolicy.OPTIMAL:
        optimal_table()  # load (or build, about a minute) before the first tick needs it
    run(create_app(settings))
