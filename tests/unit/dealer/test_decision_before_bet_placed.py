"""Issue 18 item 3 (ADR 024): a Call or Fold the dealer reads after the player's PlaceBet but
before the wallet's BetPlaced is refused out_of_order, not unknown_round; that refusal does not
use up its command_id, so the same command sent after the deal plays the round."""

from __future__ import annotations

import pytest
from support.dealer import DEALER, GAME, call, fold, sealed, void_round
from support.messages import command

from holdem.core.contracts import (
    BetRejected,
    Called,
    CommandRejected,
    Folded,
    Malfunction,
    PlaceBet,
    Reason,
    Rebet,
    RoundVoided,
)
from holdem.dealer.snapshot import dump_state, load_state


def place_bet(round_id: str = "r1", player_id: str = "p1") -> PlaceBet:
    made: PlaceBet = command(PlaceBet, player_id, round_id=round_id, currency="EUR", ante=10)
    return made


def refusal(events: list[object]) -> CommandRejected:
    [event] = events
    assert isinstance(event, CommandRejected)
    return event


@pytest.mark.parametrize("decision", [call, fold])
def test_a_decision_behind_its_bet_is_out_of_order_and_its_resend_after_the_deal_plays(
    decision: object,
) -> None:
    early = decision(command_id="d1")  # type: ignore[operator]
    state, events = DEALER.when(DEALER.given([place_bet()]), early)
    refused = refusal(events)
    assert refused.reason == Reason.OUT_OF_ORDER
    assert "not dealt yet" in refused.detail and "same command_id" in refused.detail

    state = DEALER.given([place_bet(), refused, GAME.bet_placed(), sealed(), GAME.dealt()])
    assert state.pending.get("p1") is None  # the bet is placed: nothing pending
    _, events = DEALER.when(state, early)  # the same command_id, after the deal
    assert [type(e) for e in events] == [Called if decision is call else Folded]


def test_a_rebet_is_pending_too_and_a_refused_bet_ends_it() -> None:
    rebet: Rebet = command(Rebet, "p1", round_id="r1", table_id="t1")
    state = DEALER.given([rebet])
    assert refusal(DEALER.when(state, call())[1]).reason == Reason.OUT_OF_ORDER

    rejected = BetRejected(
        **{**GAME.bet_placed().model_dump(include={"event_id", "player_id", "occurred_at"})},
        round_id="r1",
        command_id="b1",
        reason=Reason.INSUFFICIENT_FUNDS,
        detail="",
    )
    state = DEALER.given([rebet, rejected])
    assert refusal(DEALER.when(state, call())[1]).reason == Reason.UNKNOWN_ROUND


def test_a_round_nobody_bet_is_still_unknown_and_another_players_bet_does_not_count() -> None:
    assert refusal(DEALER.run([], call())).reason == Reason.UNKNOWN_ROUND
    assert refusal(DEALER.run([place_bet("r2")], call())).reason == Reason.UNKNOWN_ROUND
    other = place_bet(player_id="p2")
    assert refusal(DEALER.run([other], call())).reason == Reason.UNKNOWN_ROUND


def test_a_bet_resent_after_its_round_was_placed_pends_nothing() -> None:
    state = DEALER.given([place_bet(), GAME.bet_placed(), place_bet()])
    assert state.pending.get("p1") is None


def test_the_pending_bets_survive_a_snapshot() -> None:
    state = DEALER.given([place_bet("r9", "p7")])
    assert load_state(dump_state(state)).pending == state.pending
    assert load_state(dump_state(DEALER.given([]))).pending == {}


def test_a_void_behind_its_bet_is_out_of_order_and_its_resend_after_the_deal_voids() -> None:
    """Issue 29 defect 3: a VoidRound racing its PlaceBet gets the answer a Call gets in the
    same race (out_of_order, its command_id not used up), not unknown_round followed by
    silence for the resend: the same VoidRound sent after the deal voids the round."""
    early = void_round(command_id="v1")
    state, events = DEALER.when(DEALER.given([place_bet()]), early)
    refused = refusal(events)
    assert refused.reason == Reason.OUT_OF_ORDER and "same command_id" in refused.detail

    state = DEALER.given([place_bet(), refused, GAME.bet_placed(), sealed(), GAME.dealt()])
    _, events = DEALER.when(state, early)  # the same command_id, after the deal
    assert [type(e) for e in events] == [Malfunction, RoundVoided]  # voided: it was undecided
    assert events[0].command_id == "v1" and {e.round_id for e in events} == {"r1"}
