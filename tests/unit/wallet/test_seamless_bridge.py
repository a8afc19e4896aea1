"""The seamless wallet's decider (ADR 015) against the reference operator wallet: each transition,
each answer out of place, and what the audit makes of the result."""

from __future__ import annotations

import doctest
from unittest import mock

import orjson
import pytest
from support.deciders import types_of
from support.seamless import START, Bridged, game
from support.wallet import deposit, place_bet, withdraw

from holdem.client.seamless_sim import Faults, FaultyOperator, OperatorWallet
from holdem.core.contracts import BetRejected, OperatorRefusal, Reason, WalletRejected
from holdem.core.contracts.seamless import (
    Credited,
    CreditRequested,
    Debited,
    DebitRejected,
    DebitRejection,
    DebitRequested,
    ReplyRefusal,
    ReplyRefused,
    RollbackRequested,
    SeamlessCredited,
    SeamlessRolledBack,
)
from holdem.wallet import seamless_state
from holdem.wallet.seamless_replies import REJECTION_REASONS, WALLET_REASONS
from holdem.wallet.seamless_state import OUTSTANDING_MAX, tx_id
from holdem.wallet.snapshot import SnapshotError, dump_state, load_state

PLACED = ["wallet.seamless_debited", "round.bet_placed", "wallet.stake_taken", "wallet.call_held"]
DEBIT = 100 + 0 + 200  # ante 100, no bonus, the call hold
# The round is over once the operator acknowledged its last movement (ADR 028).
CLOSED = ["round.closed", "seamless.round_closed"]


def funded(**faults: float) -> Bridged:
    bridged = Bridged(operator=FaultyOperator(OperatorWallet(), Faults(**faults)))  # type: ignore[arg-type]
    bridged.fund("p1")
    return bridged


def balance(b: Bridged, player_id: str = "p1") -> int:
    return b.operator.wallet.balance(player_id, "EUR")


def answer_of(b: Bridged, kind: type, **changes: object) -> object:
    """What the operator would answer to the wallet's last request of ``kind``."""
    request = b.of(kind)[-1]
    reply = OperatorWallet({(request.player_id, "EUR"): START}).answer(request)[0]
    return reply.model_copy(update=changes)


def test_a_called_round_is_debited_once_and_credited_its_return_once() -> None:
    b = funded()
    assert types_of(b.bet("r1")) == ["seamless.debit_requested"]
    assert b.of(DebitRequested)[0].amount == DEBIT
    assert balance(b) == START - DEBIT  # the operator took it; the round is not on yet
    assert types_of(b.deliver()) == PLACED
    ended = b.play(game("r1"), "call")
    assert types_of(ended)[-1] == "seamless.credit_requested"
    assert types_of(b.deliver()) == ["wallet.seamless_credited", *CLOSED]
    credit = b.of(CreditRequested)[0]
    assert balance(b) == START - DEBIT + credit.amount
    assert b.state.account(("p1", "EUR", b.of(DebitRequested)[0].mode)).available == 0
    assert b.violations() == []


def test_a_folded_round_credits_the_unused_call_hold_with_its_return() -> None:
    b = funded()
    b.bet("r1")
    b.deliver()
    b.play(game("r1"), "fold")
    b.deliver()
    credit = b.of(CreditRequested)[0]
    assert credit.amount == 200  # a fold returns nothing but the hold it did not use
    assert balance(b) == START - 100
    assert b.violations() == []


def test_a_voided_round_is_rolled_back_in_full() -> None:
    b = funded()
    b.bet("r1")
    b.deliver()
    assert types_of(b.void("r1"))[-1] == "seamless.rollback_requested"
    assert types_of(b.deliver()) == ["wallet.seamless_rolled_back", *CLOSED]
    assert b.of(SeamlessRolledBack)[0].amount == DEBIT
    assert balance(b) == START
    assert b.violations() == []


@pytest.mark.parametrize(
    ("rejection", "reason", "folded"),
    [
        (DebitRejection.INSUFFICIENT_FUNDS, Reason.INSUFFICIENT_FUNDS, Reason.INSUFFICIENT_FUNDS),
        (DebitRejection.LIMIT_EXCEEDED, OperatorRefusal.LIMIT_EXCEEDED, Reason.INSUFFICIENT_FUNDS),
        (DebitRejection.SESSION_EXPIRED, OperatorRefusal.SESSION_EXPIRED, Reason.INVALID),
        (DebitRejection.PLAYER_BLOCKED, OperatorRefusal.PLAYER_BLOCKED, Reason.INVALID),
        (DebitRejection.OTHER, OperatorRefusal.OPERATOR_REJECTED, Reason.INVALID),
    ],
)
def test_a_refused_debit_refuses_the_bet_with_the_operators_reason(
    rejection: DebitRejection, reason: Reason | OperatorRefusal, folded: Reason
) -> None:
    b = Bridged()
    b.bet("r1")
    refusal = answer_of(b, DebitRequested)
    rejected = DebitRejected(**{**refusal.model_dump(exclude={"type"}), "reason": rejection})  # type: ignore[attr-defined]
    events = b.reply(rejected)
    assert types_of(events) == ["round.bet_rejected", "wallet.rejected"]
    bet_rejected, wallet_rejected = events
    assert isinstance(bet_rejected, BetRejected) and bet_rejected.version == 4
    assert bet_rejected.reason is reason
    assert bet_rejected.detail.startswith(f"operator wallet: {rejection.value}")
    # wallet.rejected v2 has no codes for the operator's refusals: it keeps the fold.
    assert isinstance(wallet_rejected, WalletRejected) and wallet_rejected.reason is folded
    assert wallet_rejected.detail == bet_rejected.detail
    assert not b.state.rounds and b.violations() == []
    assert b.bet("r2") != []  # the seat is free again


def test_every_operator_refusal_has_a_bet_reason_of_its_own() -> None:
    assert set(REJECTION_REASONS) == set(DebitRejection) == set(WALLET_REASONS)
    assert len(set(REJECTION_REASONS.values())) == len(DebitRejection)  # one to one
    # each new code is the operator's own (``other`` excepted: it says whose refusal it is)
    for rejection, reason in REJECTION_REASONS.items():
        expected = "operator_rejected" if rejection is DebitRejection.OTHER else rejection.value
        assert reason.value == expected


def test_the_operators_wager_limit_reaches_the_player_as_limit_exceeded() -> None:
    b = funded()
    b.operator.wallet.limits[("p1", "EUR")] = DEBIT  # one round's stakes
    b.bet("r1")
    assert types_of(b.deliver()) == PLACED
    b.void("r1")  # its rollback gives the limit back
    assert types_of(b.deliver()) == ["wallet.seamless_rolled_back", *CLOSED]
    b.bet("r2")
    assert types_of(b.deliver()) == PLACED
    b.play(game("r2"), "fold")
    b.deliver()
    b.bet("r3")
    events = b.deliver()
    assert types_of(events) == ["round.bet_rejected", "wallet.rejected"]
    assert events[0].reason is OperatorRefusal.LIMIT_EXCEEDED  # type: ignore[attr-defined]
    assert events[0].detail == f"operator wallet: limit_exceeded wager limit {DEBIT} EUR"  # type: ignore[attr-defined]
    assert balance(b) == START - 100  # r2's lost ante; the refused debit took nothing
    assert b.violations() == []


def test_the_operator_with_too_little_money_refuses_and_nothing_moves() -> None:
    b = funded()
    b.fund("p1", DEBIT - 1)
    b.bet("r1")
    events = b.deliver()
    assert isinstance(events[0], BetRejected) and events[0].reason is Reason.INSUFFICIENT_FUNDS
    assert balance(b) == DEBIT - 1 and b.violations() == []


def test_an_unanswered_debit_is_rolled_back_and_a_late_debited_changes_nothing() -> None:
    b = funded(max_delay=100)  # the answer is on the line far longer than the timeout
    b.bet("r1")
    assert types_of(b.tick(9)) == []
    expired = b.tick(1)
    assert types_of(expired) == [
        "seamless.rollback_requested",
        "round.bet_rejected",
        "wallet.rejected",
    ]
    assert expired[1].reason is Reason.PROCESSING_FAILED
    late = [b.reply(reply) for reply in b.operator.flush()]  # Debited and RolledBack, any order
    kinds = sorted(types_of(events)[0] for events in late)
    assert kinds == ["seamless.reply_refused", "wallet.seamless_rolled_back"]
    assert b.of(ReplyRefused)[0].reason is ReplyRefusal.SUPERSEDED
    assert b.of(SeamlessRolledBack)[0].amount == 0  # the ledger never had the debit
    assert balance(b) == START  # the operator reversed what it had taken
    assert not b.state.rounds and b.violations() == []


def test_a_rollback_reaching_the_operator_before_its_debit_refuses_the_debit() -> None:
    b = funded(silence=1.0)  # the debit does not arrive
    b.bet("r1")
    b.tick(10)
    debit, rollback = b.of(DebitRequested)[0], b.of(RollbackRequested)[0]
    wallet = b.operator.wallet
    assert [r.type for r in wallet.answer(rollback)] == ["seamless.rolled_back"]
    late = wallet.answer(debit)[0]
    assert isinstance(late, DebitRejected)  # refused when it finally arrives
    assert b.reply(late) == []  # what the rollback made true already
    b.reply(wallet.answer(rollback)[0])
    assert balance(b) == START and b.violations() == []


def test_duplicate_answers_are_applied_once() -> None:
    b = funded(duplicate=1.0)
    b.bet("r1")
    assert types_of(b.deliver()) == PLACED  # the second Debited is silent
    b.play(game("r1"), "call")
    assert types_of(b.deliver()) == ["wallet.seamless_credited", *CLOSED]
    assert len(b.replies) == 4 and b.violations() == []


def test_a_credit_is_sent_again_with_its_tx_id_until_acknowledged_and_paid_once() -> None:
    b = funded()
    b.bet("r1")
    b.deliver()
    b.operator.faults = Faults(drop=1.0)  # applied, but the answer is lost
    b.play(game("r1"), "call")
    assert b.deliver() == []
    assert types_of(b.tick(4)) == []
    assert types_of(b.tick(1)) == ["seamless.credit_requested"]
    b.operator.faults = Faults()
    b.tick(5)
    assert types_of(b.deliver()) == ["wallet.seamless_credited", *CLOSED]
    credits = b.of(CreditRequested)
    assert len(credits) == 3 and len({c.tx_id for c in credits}) == 1
    assert balance(b) == START - DEBIT + credits[0].amount  # credited once at the operator
    assert types_of(b.tick(10)) == [] and b.violations() == []


def test_a_reply_for_no_such_transaction_or_another_amount_moves_nothing() -> None:
    b = funded()
    b.bet("r1")
    honest = answer_of(b, DebitRequested)
    forged = [
        honest.model_copy(update={"tx_id": "t-forged"}),  # type: ignore[attr-defined]
        honest.model_copy(update={"amount": 1}),  # type: ignore[attr-defined]
        honest.model_copy(update={"round_id": "r9"}),  # type: ignore[attr-defined]
        honest.model_copy(update={"player_id": "p2"}),  # type: ignore[attr-defined]
    ]
    credited = Credited(**honest.model_dump(exclude={"type"}))  # type: ignore[attr-defined]
    refusals = [b.reply(reply) for reply in [*forged, credited]]
    reasons = [events[0].reason for events in refusals]
    assert reasons == [
        ReplyRefusal.UNKNOWN_TRANSACTION,
        ReplyRefusal.MISMATCH,
        ReplyRefusal.UNKNOWN_TRANSACTION,
        ReplyRefusal.UNKNOWN_TRANSACTION,
        ReplyRefusal.UNKNOWN_TRANSACTION,  # a Credited for the debit's tx id
    ]
    assert not b.state.rounds and not b.state.accounts
    assert types_of(b.reply(honest)) == PLACED  # the true answer still places the bet


def test_one_bet_at_a_time_while_the_debit_waits_and_a_resend_is_silent() -> None:
    b = funded(max_delay=5)
    bet = place_bet("r1", ante=100)
    assert types_of(b.handle(bet)) == ["seamless.debit_requested"]
    assert b.handle(bet) == []  # sent again while its debit waits
    refused = b.bet("r2")
    assert isinstance(refused[0], BetRejected) and refused[0].reason is Reason.ROUND_IN_PROGRESS
    other = b.handle(place_bet("r1", ante=200))
    assert isinstance(other[0], BetRejected) and other[0].reason is Reason.ROUND_EXISTS
    for _ in range(6):
        b.deliver()
    assert b.handle(bet) == [] and len(b.of(DebitRequested)) == 1


def test_deposits_and_withdrawals_are_refused_the_operator_holds_the_money() -> None:
    b = funded()
    for command in (deposit(1_000), withdraw(10)):
        events = b.handle(command)
        assert isinstance(events[0], WalletRejected) and events[0].reason is Reason.INVALID
        assert "seamless" in events[0].detail
    assert not b.state.accounts


def test_a_player_with_too_many_unacknowledged_rounds_is_refused_a_new_bet() -> None:
    b = funded()
    for n in range(OUTSTANDING_MAX):
        b.bet(f"r{n}")
        b.deliver()
        b.operator.faults = Faults(silence=1.0)
        b.play(game(f"r{n}"), "call")
        b.operator.faults = Faults()
    refused = b.bet("r-next")
    assert isinstance(refused[0], BetRejected) and refused[0].reason is Reason.ROUND_IN_PROGRESS
    b.tick(5)  # every credit sent again, now answered
    b.deliver()
    assert types_of(b.bet("r-next")) == ["seamless.debit_requested"]
    assert b.violations(require_closed=False) == []


def test_the_bridges_are_bounded_and_survive_a_snapshot() -> None:
    b = funded()
    with mock.patch.object(seamless_state, "BRIDGES_KEPT", 3):
        for n in range(8):
            b.bet(f"r{n}")
            b.deliver()
            b.play(game(f"r{n}"), "call" if n % 2 else "fold")
            b.deliver()
    assert len(b.state.bridges.rounds) == 3
    assert not any(
        key.startswith("seamless_") and key.endswith(":r0") for _, key in b.state.applied
    )
    b.bet("r9")
    restored = load_state(dump_state(b.state))
    assert restored == b.state
    assert restored.bridges.pending == {"p1": "r9"}
    assert b.violations(require_closed=False) == []


def test_a_duplicate_credited_after_the_bridge_closed_is_silent() -> None:
    b = funded()
    b.bet("r1")
    b.deliver()
    b.play(game("r1"), "call")
    b.deliver()
    again = answer_of(b, CreditRequested, event_id="again")
    assert b.reply(again) == []  # type: ignore[arg-type]
    assert len(b.of(SeamlessCredited)) == 1
    assert isinstance(b.replies[0], Debited)
    assert tx_id("p1", "r1", "credit") == b.of(CreditRequested)[0].tx_id


def test_the_module_examples_hold() -> None:
    result = doctest.testmod(seamless_state)
    assert result.attempted > 0 and result.failed == 0


def test_an_older_snapshot_is_refused_so_the_state_is_rebuilt_by_a_full_replay() -> None:
    b = funded()
    b.bet("r1")
    b.deliver()
    body = orjson.loads(dump_state(b.state))
    assert load_state(orjson.dumps(body)).bridges == b.state.bridges
    for version in (1, 2):  # before the bridges and the rebets were both kept
        with pytest.raises(SnapshotError):
            load_state(orjson.dumps({**body, "version": version}))
