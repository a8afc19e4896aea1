"""A seamless-mode bet's session (ADR 015, ADR 020): the table's idle timeout travels on the
DebitRequested (v2) to the BetPlaced the wallet places once debited, and the dealer's session
start pins it as for a transfer-mode bet; a v1 DebitRequested's session takes the dealer's."""

from __future__ import annotations

from support.dealer import DEALER, TABLE
from support.seamless import TIMING, Bridged
from support.tables import table_event
from support.wallet import TABLE as WALLET_TABLE

from holdem.client.seamless_sim import OperatorWallet
from holdem.core.contracts import BetPlaced, SessionStarted, TableOpened
from holdem.core.contracts.seamless import DebitRequested
from holdem.core.table_book import TableBook
from holdem.wallet.admission import Tables
from holdem.wallet.seamless import bind_seamless

IDLE = 77  # the table's idle timeout, far from the dealer's own (900 s)


def at_table(idle_timeout_s: int = IDLE) -> Bridged:
    """The seamless wallet over a book where table t1 is open, its operator funding p1."""
    book = TableBook()
    book.evolve(table_event(TableOpened, 1, idle_timeout_s=idle_timeout_s))
    bridged = Bridged(decide=bind_seamless(Tables(WALLET_TABLE, book), TIMING))
    bridged.fund("p1")
    return bridged


def session_of(placed: BetPlaced) -> SessionStarted:
    _, events = DEALER.when(DEALER.initial_state(), placed)
    started = events[0]
    assert isinstance(started, SessionStarted) and started.round_id == placed.round_id
    return started


def test_the_debit_carries_the_tables_idle_timeout_to_the_bet_and_the_session() -> None:
    bridged = at_table()

    [debit] = bridged.bet("r1", version=2, table_id="t1")
    assert isinstance(debit, DebitRequested)
    assert (debit.version, debit.table_id, debit.idle_timeout_s) == (3, "t1", IDLE)  # ADR 029
    placed = next(e for e in bridged.deliver() if isinstance(e, BetPlaced))

    assert (placed.version, placed.idle_timeout_s) == (3, IDLE)
    assert session_of(placed).idle_timeout_s == IDLE


def test_a_v1_debit_read_back_from_the_log_places_a_bet_whose_session_takes_the_dealers() -> None:
    # A debit written before DebitRequested v2 (no idle timeout), answered after the upgrade.
    written = at_table().bet("r1", version=2, table_id="t1")[0]
    old = DebitRequested.model_validate(
        {**written.model_dump(exclude={"idle_timeout_s"}), "version": 1}
    )
    bridged = at_table()
    bridged.handle(old, fold=True)  # the wallet's own record, folded on replay
    [debited] = OperatorWallet({("p1", "EUR"): 10_000}).answer(old)

    placed = next(e for e in bridged.reply(debited) if isinstance(e, BetPlaced))

    assert placed.table_id == "t1" and placed.idle_timeout_s is None
    assert session_of(placed).idle_timeout_s == int(TABLE.idle_timeout.total_seconds())
