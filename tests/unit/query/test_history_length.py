"""A history shows the last N rounds, N the history length of the table (ADR 016): of the asked
table, else of the table of the player's latest round; the table book's current terms; a
smaller asked limit is honoured, a larger one is not; never more than the service keeps."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from support.deciders import NOW
from support.queries import play
from support.rounds import RoundEvents
from support.tables import table_event

from holdem.core.contracts import (
    BetPlaced,
    HistoryQuery,
    HistoryReply,
    Message,
    TableChanged,
    TableOpened,
    parse,
)
from holdem.core.contracts.queries import HISTORY_DEFAULT, HISTORY_KEPT
from holdem.core.contracts.tables import MAX_HISTORY, TableTerms
from holdem.core.decider import Context
from holdem.core.table_book import TableBook
from holdem.query.decide import decide, history_length
from holdem.query.state import QueryState, evolve, initial_state

# (round number, table): r0..r3 at "a", r4..r6 at "b", r7 at no table (a v1 PlaceBet)
PLAYED = [(n, "a") for n in range(4)] + [(n, "b") for n in range(4, 7)]


def at_table(messages: list[Message], table_id: str | None) -> list[Message]:
    if table_id is None:
        return messages
    update = {"table_id": table_id, "table_version": 1}
    return [m.model_copy(update=update) if isinstance(m, BetPlaced) else m for m in messages]


def fold(played: list[tuple[int, str | None]], kept: int = HISTORY_KEPT) -> QueryState:
    state, balance = initial_state(kept), 10_000
    for n, table_id in played:
        game = RoundEvents(round_id=f"r{n}", at=NOW + timedelta(minutes=n))
        round_ = play(game, balance, "fold")
        for message in at_table(round_.rounds, table_id) + round_.wallet:
            state = evolve(state, message)
        balance = round_.after
    return state


def book(**lengths: int) -> TableBook:
    tables = TableBook()
    for table_id, length in lengths.items():
        tables.evolve(table_event(TableOpened, 1, table_id=table_id, history_length=length))
    return tables


def history(state: QueryState, tables: TableBook, **fields: Any) -> tuple[list[str], int]:
    query = HistoryQuery(
        event_id="q1", player_id="p1", occurred_at=NOW, correlation_id="c1",
        requester_id="lobby", **fields,
    )  # fmt: skip
    [reply] = decide(state, query, Context(NOW, "q1"), tables)
    assert isinstance(reply, HistoryReply)
    return [view.round_id for view in reply.rounds], reply.limit


def test_without_a_table_n_is_that_of_the_table_of_the_players_latest_round() -> None:
    state = fold(PLAYED)
    assert history(state, book(a=2, b=3)) == (["r6", "r5", "r4"], 3)
    assert history(state, book(a=2, b=1)) == (["r6"], 1)


def test_with_a_table_the_history_is_its_rounds_and_its_length() -> None:
    state = fold(PLAYED)
    assert history(state, book(a=2, b=3), table_id="a") == (["r3", "r2"], 2)
    assert history(state, book(a=5, b=3), table_id="a") == (["r3", "r2", "r1", "r0"], 5)
    assert history(state, book(a=2, b=3), table_id="nowhere") == ([], HISTORY_DEFAULT)


def test_a_limit_asks_for_fewer_never_for_more() -> None:
    state = fold(PLAYED)
    assert history(state, book(a=2, b=3), limit=1) == (["r6"], 1)
    assert history(state, book(a=2, b=3), limit=50) == (["r6", "r5", "r4"], 3)


def test_a_changed_history_length_applies_to_the_next_query() -> None:
    state, tables = fold(PLAYED), book(a=2, b=3)
    tables.evolve(table_event(TableChanged, 2, table_id="a", history_length=4))
    assert history(state, tables, table_id="a") == (["r3", "r2", "r1", "r0"], 4)


def test_rounds_at_no_table_or_an_unknown_one_show_the_default() -> None:
    played: list[tuple[int, str | None]] = [(n, None) for n in range(12)]
    state = fold(played)
    rounds, limit = history(state, book(a=2))
    assert limit == HISTORY_DEFAULT == 10 and rounds == [f"r{n}" for n in range(11, 1, -1)]
    assert history_length(TableBook(), "a") == HISTORY_DEFAULT
    assert TableTerms.model_fields["history_length"].default == HISTORY_DEFAULT


def test_the_service_never_shows_more_than_it_keeps() -> None:
    state = fold(PLAYED, kept=2)
    assert history(state, book(a=50, b=50)) == (["r6", "r5"], 2)
    assert HISTORY_KEPT == MAX_HISTORY  # what is kept bounds every table's length


def test_a_v1_history_query_still_reads_and_names_its_limit() -> None:
    raw = (
        b'{"type": "query.history", "version": 1, "event_id": "e", "player_id": "p1",'
        b' "occurred_at": "2026-01-01T00:00:00Z", "correlation_id": "c", "requester_id": "r",'
        b' "limit": 2}'
    )
    query = parse("queries", raw)
    assert isinstance(query, HistoryQuery) and (query.version, query.limit) == (1, 2)
    assert query.table_id is None
    assert history(fold(PLAYED), book(a=2, b=3), limit=query.limit)[1] == 2
