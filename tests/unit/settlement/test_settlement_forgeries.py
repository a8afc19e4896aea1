"""Settlement and forged or refused Settled records: its own result stands, a refused one voids."""

from __future__ import annotations

from support.deciders import types_of
from support.rounds import RoundEvents
from support.settlement import SETTLEMENT, round_of

from holdem.core.contracts import Malfunction, RoundVoided, Settled

ROUND = RoundEvents()  # As Ad vs 7c 2d on Ah Ks 9d 4c 3h: the call wins 80 on ante 10, bonus 5


def own_settled() -> Settled:
    [settled] = SETTLEMENT.run(ROUND.played()[:-1], ROUND.called())
    assert isinstance(settled, Settled)
    return settled


def forged(**changes: object) -> Settled:
    return own_settled().model_copy(update={"event_id": "forged", **changes})


def refusal(settled_id: str, kind: str = "settlement_mismatch", name: str = "w1") -> Malfunction:
    return ROUND.malfunction(
        name, source="wallet", reason=f"{kind}: differs", causation_id=settled_id
    )


def test_a_forged_settled_before_the_decision_does_not_stop_the_real_settlement() -> None:
    fake = forged(total_return=999_999_999)
    events = SETTLEMENT.run([*ROUND.played()[:-1], fake], ROUND.called())

    assert types_of(events) == ["round.settled"] and events[0].total_return == 80


def test_a_settled_that_is_not_the_rules_result_is_never_folded() -> None:
    state = SETTLEMENT.given([*ROUND.played(), forged(total_return=999_999_999)])

    assert round_of(state).status == "open" and state.recent("p1") == ()


def test_the_wallets_refusal_of_settlements_own_result_voids_the_round() -> None:
    own = own_settled()
    state = SETTLEMENT.given([*ROUND.played(), own])
    state, events = SETTLEMENT.when(state, refusal(own.event_id))

    [voided] = events
    assert isinstance(voided, RoundVoided) and voided.malfunction_id == "p1.r1.w1"
    assert round_of(state).status == "voided"
    assert state.recent("p1")[0].result == "voided"
    assert SETTLEMENT.when(state, refusal(own.event_id))[1] == []  # redelivered: once


def test_a_refusal_of_a_settled_settlement_did_not_write_changes_nothing() -> None:
    own = own_settled()
    state = SETTLEMENT.given([*ROUND.played(), own])

    for message in (refusal("forged"), refusal(own.event_id, "settlement_duplicate")):
        after, events = SETTLEMENT.when(state, message)
        assert events == [] and round_of(after).status == "settled", message.reason


def test_a_refusal_before_the_settlement_is_not_a_fault_of_the_round() -> None:
    state = SETTLEMENT.given([*ROUND.played()[:-1], refusal("forged")])

    assert types_of(SETTLEMENT.run([*ROUND.played()[:-1], refusal("forged")], ROUND.called())) == [
        "round.settled"
    ]
    assert round_of(state).faults == ()
