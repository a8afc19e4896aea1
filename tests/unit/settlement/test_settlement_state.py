"""Settlement's fold of the rounds topic: idempotent, terminal rounds frozen, game history."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from support.deciders import NOW, context_for
from support.rounds import RoundEvents
from support.settlement import SETTLEMENT, round_of

from holdem.core.contracts import BetRejected, CommandRejected, Mode, Reason, RoundVoided
from holdem.core.rules import STANDARD
from holdem.settlement.decide import decide
from holdem.settlement.state import SettlementState, evolve, initial_state

ROUND = RoundEvents()


def settled_state(*rounds: RoundEvents, limit: int = 50) -> SettlementState:
    """Every round played to its Called and settled, as the service would have done it."""
    state = initial_state(history_limit=limit)
    for round_ in rounds:
        for event in round_.played()[:-1]:
            state = evolve(state, event)
        state, _ = SETTLEMENT.when(state, round_.called())
    return state


def test_folding_every_event_twice_gives_the_state_of_folding_it_once() -> None:
    events = [*ROUND.played(), ROUND.malfunction("m1"), ROUND.malfunction("m2")]
    once, twice = initial_state(), initial_state()
    for event in events:
        once = evolve(once, event)
        twice = evolve(evolve(twice, event), event)

    assert once.rounds == twice.rounds
    assert [f.malfunction_id for f in round_of(once, "p1", "r1").faults] == [
        ROUND.malfunction("m1").event_id,
        ROUND.malfunction("m2").event_id,
    ]


def test_the_first_decision_of_a_round_is_the_one_kept() -> None:
    state = SETTLEMENT.given([*ROUND.played("fold"), ROUND.called()])

    assert round_of(state, "p1", "r1").decision == ROUND.folded()


def test_a_round_collects_bet_cards_and_decision_from_its_events() -> None:
    state = SETTLEMENT.given(ROUND.played())
    round_ = round_of(state, "p1", "r1")

    assert round_.bet == ROUND.bet_placed()
    assert round_.dealt == ROUND.dealt()
    assert round_.decision == ROUND.called()
    assert (round_.status, round_.decided) == ("open", True)


def test_an_ended_round_keeps_only_its_status_and_ignores_later_events() -> None:
    voided = RoundVoided(
        **ROUND.envelope("voided", 4), malfunction_id="m1", reason="malfunction: stuck round"
    )
    state = SETTLEMENT.given([ROUND.bet_placed(), ROUND.dealt(), voided, ROUND.called()])
    round_ = round_of(state, "p1", "r1")

    assert round_.status == "voided"
    assert (round_.bet, round_.dealt, round_.decision) == (None, None, None)


def test_rejections_do_not_open_rounds() -> None:
    rejected_bet = BetRejected(
        **ROUND.envelope("rejected", 0), command_id="c1", reason=Reason.INSUFFICIENT_FUNDS
    )
    rejected_call = CommandRejected(
        **ROUND.envelope("call-rejected", 1),
        command_id="c2",
        command_type="command.call",
        reason=Reason.UNKNOWN_ROUND,
    )

    assert SETTLEMENT.given([rejected_bet, rejected_call]).rounds == {}


def test_a_settled_real_money_round_enters_the_players_history_with_cards_bets_and_times() -> None:
    [entry] = settled_state(ROUND).recent("p1")

    assert (entry.round_id, entry.currency, entry.pay_table) == ("r1", "EUR", STANDARD.version)
    assert (entry.ante, entry.aa_bonus, entry.call, entry.decision) == (10, 5, 20, "call")
    assert (entry.result, entry.total_return, entry.bonus_return) == ("win", 80, 40)
    assert entry.player_cards == ("As", "Ad") and entry.flop == ("Ah", "Ks", "9d")
    assert entry.dealer_cards == ("7c", "2d") and entry.turn_river == ("4c", "3h")
    assert entry.placed_at == NOW and entry.decided_at == NOW + timedelta(seconds=2)
    assert entry.ended_at == NOW  # the Settled's time: the decider's clock


def test_history_is_newest_first_and_keeps_the_last_n_rounds() -> None:
    rounds = [replace(ROUND, round_id=f"r{i}") for i in range(5)]
    history = settled_state(*rounds, limit=3).recent("p1")

    assert [entry.round_id for entry in history] == ["r4", "r3", "r2"]


def test_fun_mode_rounds_keep_no_history_but_are_still_settled() -> None:
    state = settled_state(replace(ROUND, mode=Mode.FUN))

    assert state.recent("p1") == ()
    assert round_of(state, "p1", "r1").status == "settled"


def test_a_voided_round_enters_history_as_voided_with_its_reason() -> None:
    state = SETTLEMENT.given(ROUND.played())
    state, [voided] = SETTLEMENT.when(state, ROUND.malfunction())
    [entry] = state.recent("p1")

    assert (entry.result, entry.total_return, entry.decision) == ("voided", 0, "call")
    assert entry.void_reason == voided.reason


def test_each_players_history_is_their_own() -> None:
    state = settled_state(ROUND, replace(ROUND, player_id="p2", round_id="x"))

    assert [e.round_id for e in state.recent("p1")] == ["r1"]
    assert [e.round_id for e in state.recent("p2")] == ["x"]
    assert state.recent("nobody") == ()


def test_the_context_clock_is_the_settled_time() -> None:
    ctx = context_for(ROUND.called(), now=NOW + timedelta(minutes=1))
    state = SETTLEMENT.given(ROUND.played())
    [settled] = decide(state, ROUND.called(), ctx)

    assert settled.occurred_at == NOW + timedelta(minutes=1)
