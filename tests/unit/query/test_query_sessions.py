"""The query service shows a round's session (ADR 020): in the open-round reply (resume) and
in the history, from the round's Dealt v2."""

from __future__ import annotations

import orjson
from support.deciders import NOW, context_for
from support.queries import play
from support.rounds import RoundEvents

from holdem.core.contracts import HistoryQuery, OpenRoundQuery, OpenRoundReply, parse
from holdem.query.decide import decide
from holdem.query.snapshot import dump_state, load_state
from holdem.query.state import QueryState, evolve, initial_state

GAME = RoundEvents()
SESSION = "5b1c2d3e-0000-5000-8000-000000000001"


def folded(*events: object) -> QueryState:
    state = initial_state()
    for event in events:
        state = evolve(state, event)
    return state


def ask(state: QueryState, query_type: type, **fields: object) -> object:
    query = query_type(
        event_id="q1",
        player_id="p1",
        occurred_at=NOW,
        correlation_id="corr-1",
        requester_id="op-1",
        **fields,
    )
    [reply] = decide(state, query, context_for(query))
    return parse("replies", reply.model_dump_json())  # what the requester reads


def test_resume_returns_the_open_round_with_its_session_and_no_hidden_card() -> None:
    state = folded(GAME.bet_placed(table_id="t1", table_version=1), GAME.dealt(session_id=SESSION))

    reply = ask(state, OpenRoundQuery)

    assert isinstance(reply, OpenRoundReply) and reply.version == 2
    view = reply.open_round
    assert view is not None and view.session_id == SESSION and view.table_id == "t1"
    assert view.player_cards == ("As", "Ad") and view.flop == ("Ah", "Ks", "9d")
    assert (view.turn, view.river, view.dealer_cards, view.deck, view.salt) == (
        None,
        None,
        (),
        None,
        None,
    )


def test_the_history_shows_each_rounds_session() -> None:
    played = play(GAME, 1_000, "call")
    rounds = [played.rounds[0], GAME.dealt(session_id=SESSION), *played.rounds[2:]]

    reply = ask(folded(*rounds, *played.wallet), HistoryQuery)

    [view] = reply.rounds  # type: ignore[attr-defined]
    assert view.state == "settled" and view.session_id == SESSION


def test_a_round_dealt_by_a_v1_dealt_has_no_session() -> None:
    raw = orjson.loads(GAME.dealt().model_dump_json())
    raw["version"] = 1
    del raw["session_id"]
    old = parse("rounds", orjson.dumps(raw))

    state = folded(GAME.bet_placed(), old)

    assert state.books["p1"].rounds["r1"].session_id is None


def test_a_session_survives_the_snapshot_and_a_v1_snapshot_loads() -> None:
    state = folded(GAME.bet_placed(), GAME.dealt(session_id=SESSION))
    assert load_state(dump_state(state)) == state

    body = orjson.loads(dump_state(state))
    body["version"] = 1
    del body["books"]["p1"]["rounds"][0]["session_id"]
    assert load_state(orjson.dumps(body)).books["p1"].rounds["r1"].session_id is None
