"""The audit's sessions check (ADR 020): a sound session log passes; each broken invariant is
named."""

from __future__ import annotations

from typing import Any

from support.dealer import DEALER
from support.deciders import NOW
from support.rounds import RoundEvents

from holdem.core.contracts import (
    Called,
    Dealt,
    EndSession,
    RoundVoided,
    SessionEnded,
    SessionStarted,
    TimeoutPolicy,
    dump,
)
from holdem.harness.audit import Record
from holdem.harness.audit_sessions import SessionWatch, session_violations

GAME = RoundEvents()
TERMS: dict[str, Any] = {"table_id": "t1", "table_version": 1, "idle_timeout_s": 60}


def records(*messages: Any) -> list[Record]:
    return [Record.of(m.TOPIC, 0, n, dump(m)) for n, m in enumerate(messages)]


def ended_session() -> list[Any]:
    """A bet at t1, its deal, then an EndSession: the dealer's own events in log order."""
    bet = GAME.bet_placed(**TERMS, timeout_policy=TimeoutPolicy.FOLD)
    state, dealt = DEALER.when(DEALER.initial_state(), bet)
    end = EndSession(event_id="e", command_id="c", player_id="p1", occurred_at=NOW, table_id="t1")
    _, ended = DEALER.when(state, end, fold_input=False)
    return [bet, *[e for e in dealt if e.TOPIC == "rounds"], *ended]


def test_a_sound_session_log_has_no_violation() -> None:
    log = ended_session()
    assert [e.type for e in log] == [
        "round.bet_placed",
        "round.session_started",
        "round.dealt",
        "round.session_ended",
        "round.folded",
    ]
    assert session_violations(records(*log)) == []


def test_a_session_ended_twice_is_named() -> None:
    log = ended_session()
    again = log[3].model_copy(update={"event_id": "other"})
    assert session_violations(records(*log, again)) == [
        f"session {log[1].session_id}: ended 2 times"
    ]


def test_an_ended_sessions_round_left_undecided_is_named() -> None:
    found = session_violations(records(*ended_session()[:4]))
    assert found == ["p1/r1: its session ended and it was decided 0 times"]


def test_a_voided_round_of_an_ended_session_needs_no_decision_but_never_two() -> None:
    log = ended_session()
    void = RoundVoided(**GAME.envelope("voided", 3), malfunction_id="m", reason="operator: x")
    assert session_violations(records(*log[:4], void)) == []
    assert session_violations(records(*log, void)) == []  # decided, then voided by settlement
    twice = log[4].model_copy(update={"event_id": "again"})
    found = session_violations(records(*log, twice, void))
    assert found == ["p1/r1: its session ended and it was decided 2 times"]


def test_a_session_ended_by_another_player_or_never_started_is_named() -> None:
    log = ended_session()
    forged = log[3].model_copy(update={"event_id": "f", "player_id": "p2"})
    stray = forged.model_copy(update={"session_id": "nope", "player_id": "p1"})
    found = session_violations(records(*log[:3], forged, log[4], stray))
    assert f"session {log[1].session_id}: ended by p2, started by p1" in found
    assert "session nope: ended, never started" in found


def test_the_watch_holds_a_window_of_rounds_not_every_round_of_a_long_session() -> None:
    """A session's rounds are judged as they leave a window of the latest rounds (the soak's
    hour grew the live auditor by every round of every session still in the window of ended
    sessions: 176,619 rounds at 1.9 M records). A round of the ended session left undecided is
    still named, once."""
    watch = SessionWatch(kept=8)
    watch.feed(SessionStarted.model_construct(session_id="s", player_id="p"))
    for n in range(1000):
        watch.feed(Dealt.model_construct(player_id="p", round_id=f"r{n}", session_id="s"))
        if n != 995:
            watch.feed(Called.model_construct(player_id="p", round_id=f"r{n}"))
        assert len(watch.rounds) <= 8
    watch.feed(SessionEnded.model_construct(session_id="s", player_id="p"))
    assert watch.finish() == ["p/r995: its session ended and it was decided 0 times"]
