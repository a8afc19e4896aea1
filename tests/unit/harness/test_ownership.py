"""The ownership check finds each kind of wrong decision in a log, and nothing in a clean one."""

from __future__ import annotations

from typing import Any

from support.messages import command, envelope

from holdem.core.contracts import (
    BetRejected,
    CommandRejected,
    Dealt,
    FundsDeposited,
    Message,
    PlaceBet,
    Reason,
    StakeTaken,
)
from holdem.harness.audit import Record
from holdem.harness.ownership import check_ownership

COMMITMENT = "0" * 64


def record(role: str, offset: int, message: Message, partition: int = 0) -> Record:
    return Record(role, partition, offset, b"", timestamp=offset, message=message)


def deposited(available: int, **fields: Any) -> FundsDeposited:
    return FundsDeposited(
        **envelope("p1", **fields),
        idempotency_key=f"deposit:{available}",
        currency="EUR",
        amount=available,
        available=available,
        held=0,
    )


def stake(event_id: str) -> StakeTaken:
    return StakeTaken(
        **envelope("p1", event_id=event_id, round_id="r1"),
        idempotency_key="stake:r1",
        currency="EUR",
        amount=750,
        available=0,
        held=0,
        ante=500,
        aa_bonus=250,
    )


def dealt() -> Dealt:
    return Dealt(
        **envelope("p1", round_id="r1"),
        player_cards=("As", "Kd"),
        flop=("2c", "7h", "9s"),
        commitment=COMMITMENT,
        currency="EUR",
        ante=500,
        aa_bonus=250,
    )


def refused_bet(available: int) -> list[Record]:
    bet = command(PlaceBet, "p1", round_id="r1", currency="EUR", ante=500, aa_bonus=250)
    rejected = BetRejected(
        **envelope("p1", round_id="r1"), command_id=bet.command_id, reason=Reason.INSUFFICIENT_FUNDS
    )
    return [
        record("commands", 0, bet),
        record("wallet", 1, deposited(available)),
        record("rounds", 2, rejected),
    ]


def test_a_clean_log_passes() -> None:
    report = check_ownership([record("wallet", 0, deposited(10_000)), record("rounds", 1, dealt())])
    assert report.ok, report.violations
    assert report.decided == 2


def test_one_event_id_committed_twice_is_an_input_decided_twice() -> None:
    again = deposited(10_000, event_id="e1")
    report = check_ownership([record("wallet", 0, again), record("wallet", 5, again)])
    assert [v for v in report.violations if v.startswith("input decided twice")], report


def test_two_stakes_with_different_ids_for_one_round_are_two_owners() -> None:
    report = check_ownership([record("wallet", 0, stake("s1")), record("wallet", 1, stake("s2"))])
    assert report.violations == ["round p1/r1: 2 different wallet.stake_taken decided"]


def test_a_bet_refused_for_funds_the_ledger_held_is_a_partial_state() -> None:
    report = check_ownership(refused_bet(available=1_750))  # exactly ante + bonus + the call
    assert len(report.violations) == 1 and "insufficient_funds" in report.violations[0]


def test_a_bet_refused_for_funds_the_ledger_lacked_is_fine() -> None:
    assert check_ownership(refused_bet(available=1_749)).ok


def test_a_call_refused_as_unknown_after_the_deal_is_a_partial_state() -> None:
    call = CommandRejected(
        **envelope("p1", round_id="r1"),
        command_id="c1",
        command_type="command.call",
        reason=Reason.UNKNOWN_ROUND,
    )
    before = check_ownership([record("rounds", 0, call), record("rounds", 1, dealt())])
    after = check_ownership([record("rounds", 0, dealt()), record("rounds", 1, call)])
    assert before.ok, before.violations  # refused before the round existed: right
    assert len(after.violations) == 1 and "unknown_round" in after.violations[0]
