"""Decisions time makes on a tick: the table's timeout policy and the stuck-round watchdog."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from support.dealer import DEALER, GAME, TABLE, sealed, settled, tick
from support.deciders import types_of

from holdem.core.contracts import Called, Folded, Malfunction, RoundVoided
from holdem.core.deck import deal
from holdem.core.strategy import optimal
from holdem.dealer.context import TimeoutPolicy
from holdem.dealer.state import DealerState, Phase

# GAME's Dealt happens at NOW + 1s; the table's decision timeout is 30s, stuck_after 10s.
DEALT = DEALER.given([GAME.bet_placed(), sealed(), GAME.dealt()])


def test_a_round_within_its_decision_time_is_left_alone() -> None:
    assert tick(DEALT, 30.9)[1] == []


@pytest.mark.parametrize(
    ("policy", "kind"), [(TimeoutPolicy.FOLD, Folded), (TimeoutPolicy.CALL, Called)]
)
def test_a_round_past_its_decision_time_is_completed_by_the_tables_policy(
    policy: TimeoutPolicy, kind: type
) -> None:
    _, events = tick(DEALT, 31, replace(TABLE, timeout_policy=policy))

    [decision] = events
    assert isinstance(decision, kind)
    assert (decision.auto, decision.command_id, decision.round_id) == (True, None, "r1")
    assert decision.deck == tuple(map(str, GAME.deck))


def test_the_optimal_policy_plays_the_exact_best_decision_for_the_dealt_cards() -> None:
    _, events = tick(DEALT, 31, replace(TABLE, timeout_policy=TimeoutPolicy.OPTIMAL))

    [decision] = events
    dealt = deal(GAME.deck)
    expected = Called if optimal(dealt.player, dealt.flop) == "call" else Folded
    assert isinstance(decision, expected) and decision.auto


def test_a_timeout_decides_once() -> None:
    state, first = tick(DEALT, 31)
    _, second = tick(state, 32)

    assert types_of(first) == ["round.folded"] and second == []


def test_a_timeout_decided_on_two_ticks_gets_the_same_event_id() -> None:
    # A crash after publishing and before folding repeats the decision on a later tick: the
    # repeat must be recognisably the same event.
    assert tick(DEALT, 31)[1][0].event_id == tick(DEALT, 45)[1][0].event_id


def test_a_player_who_decided_is_not_timed_out() -> None:
    decided = DEALER.given([GAME.bet_placed(), sealed(), *GAME.played()[1:]])  # called at +2s
    short = replace(TABLE, decision_timeout=timedelta(seconds=1))

    assert tick(decided, 11.9, short)[1] == []  # long past the timeout, not yet stuck


def test_a_bet_never_dealt_is_reported_by_the_watchdog_once_and_voided() -> None:
    state = DEALER.given([GAME.bet_placed()])
    assert tick(state, 9.9)[1] == []

    state, events = tick(state, 10)
    assert types_of(events) == ["round.malfunction", "round.voided"]
    malfunction, voided = events
    assert isinstance(malfunction, Malfunction) and isinstance(voided, RoundVoided)
    assert malfunction.source == "watchdog" and voided.reason.startswith("watchdog:")
    assert tick(state, 20)[1] == []


def test_a_decided_round_never_settled_gets_one_watchdog_malfunction_and_no_void() -> None:
    # Settlement settled a round decided after it (r2, called at +5s): r1 was read, not settled.
    later = replace(GAME, round_id="r2", at=GAME.at + timedelta(seconds=3))
    called = [GAME.bet_placed(), sealed(), *GAME.played()[1:]]  # called at +2s
    state = DEALER.given([*called, *later.played(), settled(later)])

    state, events = tick(state, 12)
    assert types_of(events) == ["round.malfunction"]  # settlement voids a decided round
    assert tick(state, 60)[1] == []
    assert state.get("r1").phase is Phase.CALLED  # type: ignore[union-attr]


def test_a_decided_round_is_not_stuck_while_settlement_has_settled_nothing_after_it() -> None:
    """Issue 18 item 6: after a broker outage every decided round waits longer than the bound
    and then settles; the watchdog reports none of them until settlement shows it moved past
    one (a round decided later settled, or ended by settlement)."""
    called = [GAME.bet_placed(), sealed(), *GAME.played()[1:]]  # called at +2s
    assert tick(DEALER.given(called), 3600)[1] == []
    earlier = replace(GAME, round_id="r0", at=GAME.at - timedelta(seconds=3))
    state = DEALER.given([*earlier.played(), settled(earlier), *called])  # decided before r1
    assert tick(state, 3600)[1] == []


def test_settled_rounds_are_not_looked_at() -> None:
    state = DEALER.given([GAME.bet_placed(), sealed(), *GAME.played()[1:], settled()])

    assert state.open == frozenset()
    assert tick(state, 3600)[1] == []


def test_a_tick_handles_every_round_that_is_due_in_a_stable_order() -> None:
    other = replace(GAME, round_id="r0", player_id="p2")
    state: DealerState = DEALER.given(
        [GAME.bet_placed(), sealed(), GAME.dealt(), other.bet_placed()]
    )

    _, events = tick(state, 31)
    assert [(e.type, e.round_id) for e in events] == [
        ("round.malfunction", "r0"),
        ("round.voided", "r0"),
        ("round.folded", "r1"),
    ]


def test_a_round_bet_at_a_table_is_timed_out_by_its_own_terms_not_the_settings() -> None:
    # The settings say 30s and fold; the round's table version said 5s and call.
    terms = {"table_id": "t1", "table_version": 3, "decision_timeout_s": 5}
    bet = GAME.bet_placed(**terms, timeout_policy=TimeoutPolicy.CALL)
    dealt = DEALER.given([bet, sealed(), GAME.dealt()])

    assert tick(dealt, 5.9)[1] == []
    [decision] = tick(dealt, 6)[1]
    assert isinstance(decision, Called) and decision.auto


def test_a_round_keeps_its_terms_in_a_snapshot() -> None:
    from holdem.dealer.snapshot import dump_state, load_state

    bet = GAME.bet_placed(decision_timeout_s=5, timeout_policy=TimeoutPolicy.CALL)
    state = DEALER.given([bet, sealed(), GAME.dealt()])

    assert load_state(dump_state(state)) == state
    [decision] = tick(load_state(dump_state(state)), 6)[1]
    assert isinstance(decision, Called)


def test_a_decision_timeout_counts_from_the_pipelines_resumption_not_across_an_outage() -> None:
    # Dealt at 1 s, 30 s to decide; the broker was unreachable until 25 s: the player's time
    # runs from 25 s, so the table decides at 55 s, not at 31 s (issue 18 item 6).
    assert tick(DEALT, 54.9, resumed=25)[1] == []
    assert types_of(tick(DEALT, 55, resumed=25)[1]) == ["round.folded"]
    assert types_of(tick(DEALT, 31, resumed=0.5)[1]) == ["round.folded"]  # resumed before it


def test_a_bet_never_dealt_is_not_stuck_while_the_pipeline_was_stalled() -> None:
    state = DEALER.given([GAME.bet_placed()])
    assert tick(state, 15, resumed=8)[1] == []
    assert types_of(tick(state, 18, resumed=8)[1]) == ["round.malfunction", "round.voided"]
