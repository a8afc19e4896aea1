"""Sessions (ADR 020): started by a player's first bet at a table, ended by EndSession or the
table's idle timeout; an ended session's undecided round is finished by its policy at once."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from support.dealer import DEALER, GAME, TABLE, call, settled, tick
from support.deciders import NOW, types_of
from support.rounds import RoundEvents

from holdem.core.contracts import (
    Called,
    Dealt,
    EndSession,
    Folded,
    SessionEnded,
    SessionEndReason,
    SessionRefusal,
    SessionRejected,
    SessionStarted,
    TimeoutPolicy,
)
from holdem.core.deck import deal
from holdem.core.strategy import optimal
from holdem.dealer.sessions import session_id
from holdem.dealer.snapshot import dump_state, load_state
from holdem.dealer.state import ENDED_KEPT, DealerState, Phase

IDLE = 60  # the table's idle timeout; its decision timeout is far longer (300 s)
TERMS: dict[str, Any] = {
    "table_id": "t1",
    "table_version": 1,
    "decision_timeout_s": 300,
    "idle_timeout_s": IDLE,
}


def bet(game: RoundEvents = GAME, policy: TimeoutPolicy = TimeoutPolicy.FOLD, **more: Any) -> Any:
    return game.bet_placed(**{**TERMS, "timeout_policy": policy, **more})


def end_session(table_id: str = "t1", command_id: str = "end-1", player_id: str = "p1") -> Any:
    return EndSession(
        event_id=uuid.uuid4().hex,
        command_id=command_id,
        player_id=player_id,
        occurred_at=NOW,
        table_id=table_id,
    )


def decisions(events: list[Any]) -> list[Any]:
    """The session ends and round decisions among ``events`` (not the watchdog's reports of a
    decided round that no settlement follows in these tests)."""
    return [e for e in events if isinstance(e, SessionEnded | Called | Folded)]


def dealt_at_table(policy: TimeoutPolicy = TimeoutPolicy.FOLD) -> tuple[DealerState, list[Any]]:
    """The dealer's state and events after a bet at t1: a session and a dealt round."""
    return DEALER.when(DEALER.initial_state(), bet(policy=policy))


def decide_command(state: DealerState, command: Any, seconds: float = 5) -> Any:
    return DEALER.when(state, command, NOW + timedelta(seconds=seconds), fold_input=False)


def test_the_first_bet_at_a_table_starts_a_session_whose_id_its_rounds_carry() -> None:
    state, events = dealt_at_table()

    assert types_of(events) == ["round.session_started", "vault.deck_sealed", "round.dealt"]
    started, _, dealt = events
    assert isinstance(started, SessionStarted) and isinstance(dealt, Dealt)
    assert started.session_id == session_id("p1", "t1", "r1.place") == dealt.session_id
    assert (started.table_id, started.idle_timeout_s, started.command_id) == (
        "t1",
        IDLE,
        "r1.place",
    )
    assert state.session("p1", "t1") is not None
    assert state.get("r1").session_id == started.session_id  # type: ignore[union-attr]


def test_the_next_bet_at_the_table_plays_in_the_same_session() -> None:
    _, events = dealt_at_table()
    first = DEALER.given([bet(), *events, GAME.called(), settled()])
    second = RoundEvents(round_id="r2", at=NOW + timedelta(seconds=10))

    _, events = DEALER.when(first, bet(second))

    assert types_of(events) == ["vault.deck_sealed", "round.dealt"]
    assert events[1].session_id == session_id("p1", "t1", "r1.place")


def test_a_bet_at_the_default_table_has_no_session() -> None:
    state, events = DEALER.when(DEALER.initial_state(), GAME.bet_placed())

    assert types_of(events) == ["vault.deck_sealed", "round.dealt"]
    assert events[1].session_id is None and len(state.sessions) == 0


def test_another_table_is_another_session() -> None:
    state, _ = dealt_at_table()
    other = RoundEvents(round_id="r2")

    _, events = DEALER.when(state, bet(other, table_id="t2"))

    started = events[0]
    assert isinstance(started, SessionStarted) and started.table_id == "t2"
    assert started.session_id != session_id("p1", "t1", "r1.place")


def test_end_session_ends_it_and_the_next_bet_starts_a_new_one() -> None:
    state, events = dealt_at_table()
    state = DEALER.given([bet(), *events, GAME.called(), settled()])

    state, ended = decide_command(state, end_session())

    [event] = ended
    assert isinstance(event, SessionEnded)
    assert (event.reason, event.command_id) == (SessionEndReason.ENDED, "end-1")
    assert event.session_id == session_id("p1", "t1", "r1.place")
    assert len(state.sessions) == 0  # a closed session leaves the state
    _, events = DEALER.when(state, bet(RoundEvents(round_id="r2")))
    assert isinstance(events[0], SessionStarted)
    assert events[0].session_id == session_id("p1", "t1", "r2.place") == events[-1].session_id


@pytest.mark.parametrize("policy", list(TimeoutPolicy))
def test_ending_a_session_finishes_its_open_round_by_the_rounds_policy_at_once(
    policy: TimeoutPolicy,
) -> None:
    state, _ = dealt_at_table(policy)

    state, events = decide_command(state, end_session())

    assert types_of(events)[0] == "round.session_ended"
    [decision] = events[1:]
    cards = deal(GAME.deck)
    expected = {
        TimeoutPolicy.FOLD: Folded,
        TimeoutPolicy.CALL: Called,
        TimeoutPolicy.OPTIMAL: Called if optimal(cards.player, cards.flop) == "call" else Folded,
    }[policy]
    assert isinstance(decision, expected)
    assert (decision.auto, decision.command_id, decision.round_id) == (True, None, "r1")
    # The decision timeout's own ids: one round is finished once, whichever path decides it.
    timed_out = tick(dealt_at_table(policy)[0], 301)[1]
    assert [e.event_id for e in timed_out if e.round_id == "r1"] == [decision.event_id]
    # Nothing decides it again: not the decision timeout, not the idle timer.
    assert decisions(tick(state, 301)[1]) == []
    assert state.get("r1").phase in (Phase.CALLED, Phase.FOLDED)  # type: ignore[union-attr]


def test_end_session_resent_answers_nothing() -> None:
    state, _ = dealt_at_table()
    state, first = decide_command(state, end_session())

    assert types_of(first) == ["round.session_ended", "round.folded"]
    assert decide_command(state, end_session())[1] == []


def test_end_session_reusing_another_commands_id_is_a_duplicate() -> None:
    state, _ = dealt_at_table()
    state, _ = decide_command(state, call(command_id="c-1"))

    _, events = decide_command(state, end_session(command_id="c-1"))

    [refusal] = events
    assert isinstance(refusal, SessionRejected) and refusal.reason is SessionRefusal.DUPLICATE
    assert state.session("p1", "t1") is not None  # nothing changed


def test_end_session_with_no_open_session_is_refused_once() -> None:
    state, events = decide_command(DEALER.initial_state(), end_session())

    [refusal] = events
    assert isinstance(refusal, SessionRejected)
    assert (refusal.reason, refusal.table_id, refusal.command_id) == (
        SessionRefusal.NO_SESSION,
        "t1",
        "end-1",
    )
    assert decide_command(state, end_session())[1] == []  # the refusal is remembered


def test_end_session_at_another_table_than_the_players_session_is_refused() -> None:
    state, _ = dealt_at_table()

    [refusal] = decide_command(state, end_session(table_id="t2"))[1]

    assert isinstance(refusal, SessionRejected) and refusal.reason is SessionRefusal.NO_SESSION


@pytest.mark.parametrize("policy", list(TimeoutPolicy))
def test_the_idle_timeout_ends_the_session_and_finishes_its_round_once(
    policy: TimeoutPolicy,
) -> None:
    state, _ = dealt_at_table(policy)
    assert tick(state, IDLE - 0.1)[1] == []

    state, events = tick(state, IDLE)

    assert types_of(events)[0] == "round.session_ended"
    ended, decision = events
    assert isinstance(ended, SessionEnded) and ended.reason is SessionEndReason.IDLE_TIMEOUT
    assert isinstance(decision, Called | Folded) and decision.auto
    assert decisions(tick(state, IDLE + 1)[1]) == decisions(tick(state, 301)[1]) == []


def test_an_idle_timeout_decided_on_two_ticks_gets_the_same_ids() -> None:
    state, _ = dealt_at_table()

    first = tick(state, IDLE)[1]
    again = tick(state, IDLE + 7)[1]  # a crash before the first was committed

    assert [e.event_id for e in first] == [e.event_id for e in again]


def test_a_players_decision_starts_the_idle_timeout_again() -> None:
    state, _ = dealt_at_table()
    state, _ = decide_command(state, call(), seconds=20)  # the Called is at NOW + 20 s

    assert decisions(tick(state, IDLE + 19)[1]) == []
    [ended] = decisions(tick(state, IDLE + 20)[1])
    assert isinstance(ended, SessionEnded) and ended.reason is SessionEndReason.IDLE_TIMEOUT


def test_an_automatic_decision_is_no_command_of_the_player() -> None:
    short = {**TERMS, "decision_timeout_s": 10}
    state, _ = DEALER.when(DEALER.initial_state(), bet(**short))
    state, timed_out = tick(state, 10)
    assert types_of(timed_out) == ["round.folded"]

    [ended] = decisions(tick(state, IDLE)[1])
    assert isinstance(ended, SessionEnded)


def test_a_bet_after_the_idle_timeout_starts_a_new_session() -> None:
    # The dealer did not tick in between (it was down): the bet ends the old session first.
    _, first = dealt_at_table()
    played = [bet(), *first, GAME.called(), settled()]  # the Call at NOW + 2 s
    state = DEALER.given(played)
    late = RoundEvents(round_id="r2", at=NOW + timedelta(seconds=IDLE + 5))

    state, events = DEALER.when(state, bet(late), NOW + timedelta(seconds=IDLE + 5))

    assert types_of(events) == [
        "round.session_ended",
        "round.session_started",
        "vault.deck_sealed",
        "round.dealt",
    ]
    ended, started = events[:2]
    assert ended.reason is SessionEndReason.IDLE_TIMEOUT
    assert ended.session_id == session_id("p1", "t1", "r1.place")
    assert started.session_id == session_id("p1", "t1", "r2.place") == events[-1].session_id
    # The same ids as the tick that would have ended it.
    assert ended.event_id == decisions(tick(DEALER.given(played), IDLE + 2)[1])[0].event_id


def test_a_session_started_read_again_after_its_end_does_not_reopen_it() -> None:
    state, events = dealt_at_table()
    state, ended = decide_command(state, end_session())
    started = events[0]

    again = DEALER.evolve(state, started)  # the dealer's own event, back as an input

    assert again.session("p1", "t1") is None
    assert DEALER.evolve(again, ended[0]) == again


def test_closed_sessions_leave_the_state_and_their_ids_are_bounded() -> None:
    state = DEALER.initial_state()
    for n in range(3 * ENDED_KEPT):
        game = RoundEvents(round_id=f"r{n}", at=NOW + timedelta(seconds=n))
        state, _ = DEALER.when(state, bet(game))
        for event in [game.called(), settled(game)]:
            state = DEALER.evolve(state, event)
        state, _ = decide_command(state, end_session(command_id=f"end-{n}"), n)

    assert len(state.sessions) == 0
    assert len(state.ended["p1"]) == ENDED_KEPT


def test_sessions_survive_a_snapshot_and_a_v1_snapshot_still_loads() -> None:
    state, _ = dealt_at_table(TimeoutPolicy.CALL)
    state, _ = decide_command(DEALER.given([]), end_session("t9"))  # a refusal remembered
    state, _ = dealt_at_table(TimeoutPolicy.CALL)
    other, _ = DEALER.when(state, bet(RoundEvents(round_id="r2", player_id="p2"), table_id="t2"))

    loaded = load_state(dump_state(other))
    assert loaded == other
    [ended, decision] = tick(loaded, IDLE)[1][:2]
    assert isinstance(ended, SessionEnded) and isinstance(decision, Called)

    import orjson

    v1 = orjson.loads(dump_state(DEALER.initial_state()))
    v1["version"] = 1
    del v1["sessions"], v1["ended"]
    assert load_state(orjson.dumps(v1)) == DEALER.initial_state()


def test_a_round_of_an_ended_session_found_undecided_is_finished_on_the_next_tick() -> None:
    # Belt and braces: should a dealt round of an ended session be undecided (a log written
    # otherwise), the tick finishes it at once with the decision timeout's ids.
    state, events = dealt_at_table()
    ended = SessionEnded(
        event_id="x",
        player_id="p1",
        occurred_at=NOW,
        session_id=events[0].session_id,
        table_id="t1",
        reason=SessionEndReason.ENDED,
    )
    state = DEALER.evolve(state, ended)

    [decision] = tick(state, 2)[1]
    assert isinstance(decision, Folded) and decision.auto
    assert decision.event_id == tick(dealt_at_table()[0], 301)[1][-1].event_id


def test_sessions_are_kept_per_player_and_table() -> None:
    state, _ = dealt_at_table()
    other = replace(GAME, player_id="p2", round_id="r9")
    state, events = DEALER.when(state, bet(other))

    assert isinstance(events[0], SessionStarted)
    assert set(state.sessions) == {("p1", "t1"), ("p2", "t1")}
    _, ended = decide_command(state, end_session(player_id="p2", command_id="e2"))
    assert ended[0].session_id == session_id("p2", "t1", "r9.place")
    assert TABLE.idle_timeout == timedelta(seconds=900)  # a v2 bet's session takes this


def test_idle_time_counts_from_the_pipelines_resumption_not_across_an_outage() -> None:
    state, _ = dealt_at_table()
    # The broker could not be reached until IDLE - 5: the player's idle time runs from there.
    assert tick(state, IDLE, resumed=IDLE - 5)[1] == []
    assert types_of(tick(state, 2 * IDLE - 5, resumed=IDLE - 5)[1])[0] == "round.session_ended"
