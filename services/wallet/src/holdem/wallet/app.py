"""The wallet service: one of its two modes (transfer or seamless, ``HOLDEM_WALLET_MODE``) wired
into the shared runtime, and its entry point."""

from __future__ import annotations

import structlog
from prometheus_client import CollectorRegistry

from holdem.core.contracts import (
    ADMIN_TYPES,
    COMMAND_OWNERS,
    COMMAND_TYPES,
    BetPlaced,
    Dealt,
    Malfunction,
    Message,
    SessionEnded,
    SessionStarted,
    type_names,
)
from holdem.core.contracts.protection import PLAYER_EVENTS
from holdem.core.contracts.rounds import broken_round
from holdem.core.contracts.seamless import SEAMLESS_MOVES, SEAMLESS_REPLIES, SEAMLESS_REQUESTS
from holdem.core.currencies import CURRENCIES, Currencies
from holdem.core.decider import Context
from holdem.core.table_book import TableBook
from holdem.runtime.app import ServiceApp, build_app, run
from holdem.runtime.logging import configure_logging
from holdem.runtime.processor import Spec
from holdem.runtime.snapshots import Codec
from holdem.runtime.transport import Transport
from holdem.wallet import snapshot
from holdem.wallet.admission import DefaultTable, Tables
from holdem.wallet.decide import bind
from holdem.wallet.metrics import WalletCounters
from holdem.wallet.promotions import expire_campaigns
from holdem.wallet.rounds import ROUND_HANDLERS
from holdem.wallet.seamless import Timing, bind_seamless, evolve_seamless, on_tick
from holdem.wallet.settings import WalletSettings
from holdem.wallet.state import State, evolve, initial_state

log = structlog.get_logger(__name__)
NAME = "wallet"
OWNED_COMMANDS = COMMAND_OWNERS["wallet"] | ADMIN_TYPES  # and its command ids' scope


def log_refusals(state: State, message: Message, events: list[Message]) -> None:
    """A Settled the wallet would not pay is an attack or a bug: say so (the metric counts it)."""
    for event in events:
        if isinstance(event, Malfunction) and event.refuses_settled():
            log.warning(
                "settled refused",
                round_id=event.round_id,
                player_id=event.player_id,
                settled_id=event.causation_id,
                reason=event.reason,
            )


# Every command (it reports unknown types), the admin's, the bets (what Rebet repeats) and the
# rounds events that prove and end a round; BetRejected, Malfunction and CommandRejected are
# skipped unparsed. Seamless mode also reads its requests, the operator's replies and its moves.
# The dealer's session events and its own blocks (read back) for player protection (ADR 028).
READS = COMMAND_TYPES | ADMIN_TYPES | type_names(BetPlaced, Dealt, *ROUND_HANDLERS)
READS |= type_names(SessionStarted, SessionEnded, *PLAYER_EVENTS)
SEAMLESS_READS = READS | type_names(*SEAMLESS_REQUESTS, *SEAMLESS_REPLIES, *SEAMLESS_MOVES)
SNAPSHOT = Codec(snapshot.dump_state, snapshot.load_state)


def wallet_spec(
    table: DefaultTable,
    book: TableBook | None = None,
    currencies: Currencies = CURRENCIES,
    *,
    timing: Timing | None = None,
) -> Spec[State]:
    """The wallet as the runtime sees it, in transfer mode, or in seamless mode (ADR 015) when
    given the operator's ``timing``. Both read commands, the admin's table commands and rounds,
    fold their own ledger and the rounds' bets, deals and reveals (what a payout is checked
    against), and keep the whole table book (ADR 018); one bet pipeline decides both
    (``holdem.wallet.bets``). Seamless mode also reads the operator's replies, folds its own
    requests, and on ticks expires debits and re-sends credits and rollbacks."""
    book = TableBook() if book is None else book
    inputs: tuple[str, ...] = ("commands", "rounds", "admin")
    if timing is None:
        decide, evolve_state, reads = bind(table, book, currencies), evolve, READS
        tick, every = expire_campaigns, 1.0  # free-hand campaigns past their expiry (ADR 029)

        def open_rounds(state: State) -> int:
            return len(state.open_rounds)
    else:
        operator = timing
        inputs += ("seamless_replies",)
        decide = bind_seamless(Tables(table, book, currencies), operator)
        evolve_state, reads = evolve_seamless, SEAMLESS_READS
        every = min(1.0, operator.retry_after.total_seconds() / 2)

        def tick(state: State, ctx: Context) -> list[Message]:
            return on_tick(state, ctx, operator)

        def open_rounds(state: State) -> int:
            return len(state.open_rounds) + len(state.bridges.pending)

    return Spec[State](
        name=NAME,
        initial_state=initial_state,
        evolve=evolve_state,
        decide=decide,
        inputs=inputs,
        state_roles=("wallet", "rounds"),
        outputs=("rounds", "wallet", "tables"),  # and "rejected", which the runtime adds
        commands=OWNED_COMMANDS,
        # The design makes the wallet the one that reports commands nobody owns (unknown types),
        # and the operator's unreadable replies; the dealer reports unreadable rounds records.
        rejects_unreadable=frozenset(inputs) - {"rounds"},
        tick=tick,
        tick_interval_s=every,
        open_rounds=open_rounds,
        on_handled=log_refusals,
        counters=WalletCounters,
        on_failure=broken_round(NAME),
        snapshot=SNAPSHOT,
        reads=reads,
        book_roles=("tables",),
        fold_book=book.evolve,
    )


def seamless_spec(
    table: DefaultTable, timing: Timing, currencies: Currencies = CURRENCIES
) -> Spec[State]:
    """The wallet bridging to the operator's wallet (ADR 015): ``wallet_spec`` with its timing."""
    return wallet_spec(table, currencies=currencies, timing=timing)


def create_app(
    settings: WalletSettings,
    *,
    transport: Transport | None = None,
    registry: CollectorRegistry | None = None,
) -> ServiceApp:
    """The wallet's app (holdem.runtime.app); ``transport`` for tests (default: Kafka)."""
    timing = settings.timing if settings.wallet_mode == "seamless" else None
    spec = wallet_spec(settings.table, currencies=settings.currency_table, timing=timing)
    return build_app(spec, settings, transport=transport, registry=registry)


def main() -> None:
    """``holdem-wallet``: run the service until SIGINT/SIGTERM, serving /metrics."""
    settings = WalletSettings()
    configure_logging(NAME, settings.log_level)
    run(create_app(settings))
