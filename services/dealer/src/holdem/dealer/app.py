"""The dealer service: its decider wired into the shared runtime, and its entry point."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import structlog
from prometheus_client import CollectorRegistry

from holdem.core.contracts import COMMAND_OWNERS, DeckSealed, Message, Mode, type_names
from holdem.core.contracts.rounds import broken_round
from holdem.core.decider import Context
from holdem.core.deck import new_salt, shuffle
from holdem.core.strategy import optimal_table
from holdem.core.table_book import TableBook
from holdem.dealer import snapshot
from holdem.dealer.context import DeckSource, Tick, TimingRules
from holdem.dealer.decide import HANDLED, bind
from holdem.dealer.metrics import DealerCounters
from holdem.dealer.settings import DealerSettings
from holdem.dealer.state import FOLDED, DealerState, evolve, initial_state
from holdem.dealer.vault import Vault, VaultError, VaultKeyError
from holdem.runtime.app import ServiceApp, build_app, run
from holdem.runtime.logging import configure_logging
from holdem.runtime.processor import Spec
from holdem.runtime.snapshots import Codec
from holdem.runtime.transport import Transport

log = structlog.get_logger(__name__)
NAME = "dealer"
OWNED_COMMANDS = COMMAND_OWNERS["dealer"]  # and its command ids' scope (ADR 022)


def csprng_deck() -> tuple[Sequence[int], bytes]:
    """The production deck source: the core's Fisher–Yates shuffle (one read of the OS CSPRNG)
    and salt."""
    return shuffle(), new_salt()


Fatal = Callable[[VaultError], None]


class RealMoneyInTestMode(RuntimeError):
    """A dealer in test mode whose table book holds a real-money table (ADR 030)."""


def refuse_real_money(book: TableBook) -> Callable[[], None]:
    """The test-mode dealer's check of its table book (``Spec.check_book``): after its replay
    and after every table event it reads, any real-money table, open or closed, is fatal. The
    supervisor restarts it and it refuses again: forced decks and real money never meet."""

    def check() -> None:
        real = sorted(t.table_id for t in book.tables.values() if t.terms.mode is Mode.REAL)
        if real:
            log.critical(
                "test mode on a real-money deployment: refusing to run",
                real_money_tables=real,
            )
            raise RealMoneyInTestMode(
                f"test mode (HOLDEM_DEALER_TEST_MODE) with real-money tables: {', '.join(real)}"
            )

    return check


def checked_evolve(
    vault: Vault, on_fatal: Fatal | None = None
) -> Callable[[DealerState, Any], DealerState]:
    """``evolve``, but a vault record that does not open is fatal: replaying it, the dealer
    could not rebuild the decks it committed to, so it must stop, not deal on without them.
    ``on_fatal`` stops the process: the consumer's rebalance callback, where replays run,
    only logs what it raises."""

    def fold(state: DealerState, event: Any) -> DealerState:
        if isinstance(event, DeckSealed):
            try:
                vault.open(event)
            except VaultError as error:
                log.critical(
                    "vault record cannot be opened: the dealer cannot rebuild its state",
                    error=str(error),
                    key_id=event.key_id,
                    round_id=event.round_id,
                )
                if on_fatal is not None:
                    on_fatal(error)
                raise
        return evolve(state, event)

    return fold


def dealer_spec(
    table: TimingRules,
    vault: Vault,
    tick_interval_s: float = 1.0,
    new_deck: DeckSource = csprng_deck,
    on_fatal: Fatal | None = None,
    test_mode: bool = False,
) -> Spec[DealerState]:
    """The dealer as the runtime sees it: reads commands and rounds, folds rounds and its vault,
    and keeps the table book (ADR 018), which a dealer in test mode checks (ADR 030)."""
    decide_at_table = bind(table, new_deck, vault, test_mode)
    book = TableBook()

    def tick(state: DealerState, ctx: Context) -> list[Message]:
        return decide_at_table(state, Tick(ctx.now, ctx.resumed_at), ctx)

    return Spec[DealerState](
        name=NAME,
        initial_state=initial_state,
        evolve=checked_evolve(vault, on_fatal),
        # Its own events as built: a DeckSealed it just sealed is not opened to be folded.
        evolve_own=evolve,
        decide=decide_at_table,
        inputs=("commands", "rounds"),
        # commands: the bets sent, so that a decision sent right behind its bet is known as
        # early (out_of_order) rather than unknown (ADR 024); the rest of them fold to nothing.
        state_roles=("rounds", "vault", "commands"),
        outputs=("rounds", "vault"),
        commands=OWNED_COMMANDS,
        rejects_unreadable=frozenset({"rounds"}),
        tick=tick,
        tick_interval_s=tick_interval_s,
        open_rounds=lambda state: len(state.open),
        on_failure=broken_round(NAME),
        snapshot=Codec(snapshot.dump_state, snapshot.load_state),
        counters=DealerCounters,
        reads=type_names(*FOLDED, *HANDLED),
        book_roles=("tables",),
        fold_book=book.evolve,
        check_book=refuse_real_money(book) if test_mode else None,
    )


def create_app(
    settings: DealerSettings,
    *,
    transport: Transport | None = None,
    registry: CollectorRegistry | None = None,
    new_deck: DeckSource = csprng_deck,
    on_fatal: Fatal | None = None,
) -> ServiceApp:
    """The dealer's app (holdem.runtime.app); ``transport`` for tests (default: Kafka),
    ``new_deck`` for tests that need known cards. ``VaultKeyError`` if the settings give no
    vault key."""
    vault = settings.vault()
    spec = dealer_spec(
        settings.table,
        vault,
        settings.watchdog_interval_s,
        new_deck,
        on_fatal,
        test_mode=settings.dealer_test_mode,
    )
    return build_app(spec, settings, transport=transport, registry=registry)


def main() -> None:
    """``holdem-dealer``: run the service until SIGINT/SIGTERM, serving /metrics."""
    settings = DealerSettings()
    configure_logging(NAME, settings.log_level)
    fatal: list[VaultError] = []

    def stop(error: VaultError) -> None:
        fatal.append(error)
        service.exit()

    try:
        service = create_app(settings, on_fatal=stop)
    except VaultKeyError as error:  # no key, no deal: refuse to start rather than deal in clear
        log.critical("cannot start", error=str(error))
        raise SystemExit(f"holdem-dealer: {error}") from None
    # Read the optimal decision table holdem-core ships (290 kB of bits, nothing computed)
    # before the first tick needs it: besides the settings, any table of the book may choose
    # the optimal policy for its rounds (ADR 018).
    optimal_table()
    run(service)
    if fatal:
        raise SystemExit(f"holdem-dealer: {fatal[0]}")
