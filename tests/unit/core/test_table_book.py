"""The table book: each table's latest version, folded idempotently from the tables log."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from support.tables import table_event as event

from holdem.core.contracts import TableChanged, TableClosed, TableEvent, TableOpened
from holdem.core.table_book import COMMANDS_KEPT, TableBook

LOG = [
    event(TableOpened, 1),
    event(TableChanged, 2, ante_max=2_000),
    event(TableChanged, 3, ante_max=3_000),
    event(TableClosed, 4, ante_max=3_000),
]


def fold(events: list[TableEvent]) -> TableBook:
    book = TableBook()
    for e in events:
        book.evolve(e)
    return book


def test_the_log_folds_to_the_latest_version() -> None:
    table = fold(LOG).tables["t1"]
    assert (table.version, table.terms.ante_max, table.open) == (4, 3_000, False)


@given(st.lists(st.sampled_from(LOG), max_size=12))
def test_records_seen_again_or_out_of_order_never_skip_or_repeat_a_version(
    seen: list[TableEvent],
) -> None:
    """Whatever records a reader sees twice, the book is a prefix of the log, and reading the
    whole log after it gives the same book as reading it once."""
    book = fold(seen)
    table = book.tables.get("t1")
    if table is not None:
        assert LOG[table.version - 1].terms == table.terms
    for e in LOG:
        book.evolve(e)
    assert book == fold(LOG)


def test_a_closed_table_stays_closed_and_an_opening_needs_no_table() -> None:
    book = fold([*LOG, event(TableChanged, 5), event(TableOpened, 1, "t2")])
    reopened = event(TableOpened, 1)  # t1 exists: ignored
    book.evolve(reopened)
    assert (book.tables["t1"].version, book.tables["t2"].version) == (4, 1)


def test_the_commands_remembered_per_table_are_bounded() -> None:
    changes = [event(TableChanged, v, ante_max=1_000 + v) for v in range(2, 2 * COMMANDS_KEPT)]
    book = fold([event(TableOpened, 1), *changes])
    assert len(book.commands["t1"]) == COMMANDS_KEPT
