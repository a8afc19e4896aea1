"""The query service's history window: bounded per player whatever is played, and always the
newest real-money rounds, newest first, as many as asked up to the table's history length and
the bound."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from support.deciders import NOW, context_for
from support.queries import fun, play
from support.rounds import RoundEvents

from holdem.core.contracts import HistoryQuery, HistoryReply
from holdem.core.contracts.queries import HISTORY_DEFAULT
from holdem.query.decide import decide
from holdem.query.snapshot import dump_state, load_state
from holdem.query.state import OPEN_KEPT, evolve, initial_state

ROUND = st.tuples(st.sampled_from(["call", "fold", "void", "open"]), st.booleans())


@settings(max_examples=60, deadline=None)
@given(
    rounds=st.lists(ROUND, max_size=40),
    kept=st.integers(1, 12),
    limit=st.integers(1, 50),
)
def test_the_history_is_the_newest_real_rounds_within_the_bound(
    rounds: list[tuple[str, bool]], kept: int, limit: int
) -> None:
    state = initial_state(kept)
    finished_real: list[str] = []
    for n, (decision, is_fun) in enumerate(rounds):
        game = RoundEvents(round_id=f"r{n}", at=NOW + timedelta(minutes=n))
        game = fun(game) if is_fun else game
        played = play(game, 10_000, "call" if decision == "open" else decision)  # type: ignore[arg-type]
        events = played.rounds[:2] if decision == "open" else played.rounds + played.wallet
        for event in events:
            state = evolve(state, event)
        if decision != "open" and not is_fun:
            finished_real.append(game.round_id)
    book = state.books.get("p1")
    views = list(book.rounds.values()) if book else []
    assert sum(v.finished for v in views) <= kept
    assert sum(not v.finished for v in views) <= OPEN_KEPT
    assert all(v.mode.value == "real" for v in views if v.finished)
    assert load_state(dump_state(state)) == state  # what a restart loads is what was folded
    if book is None:
        return
    query = HistoryQuery(
        event_id="q", player_id="p1", occurred_at=NOW, correlation_id="c", requester_id="r",
        limit=limit,
    )  # fmt: skip
    [reply] = decide(state, query, context_for(query))
    assert isinstance(reply, HistoryReply)
    # Rounds at no table: N is the default history length; a limit asks for fewer, never more.
    applied = min(limit, HISTORY_DEFAULT, kept)
    expected = list(reversed(finished_real))[:applied]
    assert [v.round_id for v in reply.rounds] == expected
    assert reply.limit == applied
