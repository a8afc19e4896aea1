"""The dealer's share of player protection (ADR 028): an operator's EndSession with a reason
ends the session at once, and a blocked player's sessions end and his waiting round is finished
by its policy, exactly once."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from support.dealer import DEALER, GAME
from support.deciders import NOW, types_of
from support.rounds import RoundEvents

from holdem.core.contracts import (
    Called,
    EndSession,
    Folded,
    OperatorEndReason,
    PlayerBlocked,
    SessionEnded,
    SessionEndReason,
    TimeoutPolicy,
)
from holdem.dealer.state import DealerState, Phase

TERMS: dict[str, Any] = {
    "table_id": "t1",
    "table_version": 1,
    "decision_timeout_s": 300,
    "idle_timeout_s": 900,
}


def dealt(policy: TimeoutPolicy = TimeoutPolicy.FOLD) -> DealerState:
    state, events = DEALER.when(
        DEALER.initial_state(), GAME.bet_placed(**TERMS, timeout_policy=policy)
    )
    assert types_of(events)[0] == "round.session_started"
    return state


def blocked(event_id: str = "blocked-1") -> PlayerBlocked:
    return PlayerBlocked(
        event_id=event_id, player_id="p1", occurred_at=NOW, command_id="block-1", reason="rg"
    )


def end_session(reason: OperatorEndReason | None) -> EndSession:
    return EndSession(
        event_id=uuid.uuid4().hex,
        command_id="end-1",
        player_id="p1",
        occurred_at=NOW,
        table_id="t1",
        **({} if reason is None else {"reason": reason}),
    )


@pytest.mark.parametrize("reason", list(OperatorEndReason))
def test_an_operators_end_session_ends_it_at_once_with_its_reason(
    reason: OperatorEndReason,
) -> None:
    state = dealt(TimeoutPolicy.CALL)

    state, events = DEALER.when(state, end_session(reason), fold_input=False)

    ended, *decided = [e for e in events if isinstance(e, SessionEnded | Called | Folded)]
    assert isinstance(ended, SessionEnded) and ended.reason.value == reason.value
    assert ended.version == 2 and ended.command_id == "end-1"
    assert [type(e) for e in decided] == [Called] and decided[0].auto  # the table's policy
    assert state.session("p1", "t1") is None
    assert state.get("r1").phase is Phase.CALLED  # type: ignore[union-attr]


def test_a_v1_end_session_still_ends_it_ended() -> None:
    command = end_session(None)
    assert command.version == 1

    _, events = DEALER.when(dealt(), command, fold_input=False)

    assert events[0].reason is SessionEndReason.ENDED


def test_a_blocked_players_sessions_end_and_his_waiting_round_is_finished_once() -> None:
    state = dealt(TimeoutPolicy.FOLD)

    state, events = DEALER.when(state, blocked())

    ended = [e for e in events if isinstance(e, SessionEnded)]
    finished = [e for e in events if isinstance(e, Called | Folded)]
    assert [(e.reason, e.command_id) for e in ended] == [(SessionEndReason.BLOCKED, "block-1")]
    assert len(finished) == 1 and isinstance(finished[0], Folded) and finished[0].auto
    assert state.sessions == {}
    _, again = DEALER.when(state, blocked())  # read again (a redelivery): nothing left to do
    assert again == []


def test_a_block_finishes_a_waiting_round_at_the_default_table_too() -> None:
    state, _ = DEALER.when(DEALER.initial_state(), GAME.bet_placed())  # no table: no session

    _, events = DEALER.when(state, blocked())

    assert types_of(events) == ["round.folded"] and events[0].auto


def test_a_block_leaves_other_players_alone() -> None:
    other = RoundEvents(player_id="p2", round_id="r9")
    state = dealt()
    state, _ = DEALER.when(state, other.bet_placed(**TERMS, timeout_policy=TimeoutPolicy.FOLD))

    state, events = DEALER.when(state, blocked())

    assert {e.player_id for e in events} == {"p1"}
    assert state.session("p2", "t1") is not None
