"""Settlement pays a round by the pay table its bet pinned, and only by one it has: a bet pinned
to another is reported at once (the dealer voids it while undecided), and voided by settlement
if its decision came first; never settled by a table the bet did not name."""

from __future__ import annotations

from support.deciders import types_of
from support.rounds import RoundEvents
from support.settlement import SETTLEMENT, round_of

from holdem.core.contracts import BetPlaced, Malfunction, RoundVoided, Settled
from holdem.core.rules import PAY_TABLES, STANDARD, pay_table

ROUND = RoundEvents()


def pinned(version: str | None) -> BetPlaced:
    return ROUND.bet_placed(version=2, table_id="t1", table_version=1, pay_table=version)


def test_a_bet_pinned_to_a_known_pay_table_is_settled_by_it() -> None:
    [settled] = SETTLEMENT.run([pinned("standard-1"), ROUND.dealt()], ROUND.called())
    assert isinstance(settled, Settled) and settled.pay_table == STANDARD.version == "standard-1"
    assert SETTLEMENT.run([], pinned("standard-1")) == []  # nothing to say at the bet


def test_a_bet_from_before_pins_is_paid_by_the_standard_tables() -> None:
    [settled] = SETTLEMENT.run([pinned(None), ROUND.dealt()], ROUND.called())
    assert isinstance(settled, Settled) and settled.pay_table == "standard-1"


def test_an_unknown_pay_table_is_reported_at_the_bet_once() -> None:
    bet = pinned("standard-9")
    state, events = SETTLEMENT.when(SETTLEMENT.initial_state(), bet)
    [malfunction] = events
    assert isinstance(malfunction, Malfunction) and malfunction.source == "settlement"
    assert "unknown pay table 'standard-9'" in malfunction.reason
    assert round_of(state).faults  # the dealer voids the round on it while it is undecided
    again = bet.model_copy(update={"event_id": "again"})
    assert SETTLEMENT.when(state, again)[1] == []  # redelivered or resent: reported once


def test_an_unknown_pay_table_decided_before_its_void_is_voided_by_settlement_once() -> None:
    state, _ = SETTLEMENT.when(SETTLEMENT.initial_state(), pinned("standard-9"))
    state = SETTLEMENT.evolve(state, ROUND.dealt())
    state, events = SETTLEMENT.when(state, ROUND.called())
    [voided] = events
    assert isinstance(voided, RoundVoided) and "unknown pay table" in voided.reason
    assert SETTLEMENT.when(state, ROUND.called())[1] == []


def test_an_unknown_pay_table_never_reported_before_is_voided_at_the_decision() -> None:
    """A settlement that missed the bet's report (e.g. its Malfunction was not folded yet) still
    never settles it: the decision finds the pay table unknown and voids."""
    state = SETTLEMENT.given([pinned("standard-9"), ROUND.dealt()])
    events = SETTLEMENT.when(state, ROUND.called())[1]
    assert types_of(events) == ["round.malfunction", "round.voided"]


def test_the_pay_tables_the_game_has() -> None:
    assert dict(PAY_TABLES) == {"standard-1": STANDARD}
    assert pay_table("standard-9") is None and pay_table(None) is STANDARD
