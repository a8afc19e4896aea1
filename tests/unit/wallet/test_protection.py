"""Player protection in the wallet (ADR 028): each limit refuses at exactly the bet that would
pass it, a blocked player bets nothing until unblocked, a reality check pauses the session's
bets until acknowledged, and the operator's commands are answered once, with typed refusals."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from pydantic import ValidationError
from support.deciders import NOW
from support.protection import ANTE, Seat, funded
from support.seamless import Bridged, game
from support.wallet import deposit

from holdem.client.seamless_sim import Faults, FaultyOperator, OperatorWallet
from holdem.core.contracts import (
    AcknowledgeRealityCheck,
    BetPlaced,
    BetRejected,
    BlockPlayer,
    ContractError,
    LimitKind,
    LimitsSet,
    Message,
    OperatorRefusal,
    PayoutCredited,
    PlayerBlocked,
    PlayerUnblocked,
    ProtectionRefusal,
    ProtectionRejected,
    ProtectionRejection,
    RealityCheckAcknowledged,
    SetLimits,
    StakeTaken,
    UnblockPlayer,
    WalletRejected,
    parse,
)
from holdem.core.contracts.protection import Limits
from holdem.core.contracts.seamless import DebitRequested, RollbackRequested
from holdem.wallet.state import evolve, initial_state

WORST = 3 * ANTE  # what one bet may wager and lose: ante and the call


def refusal(events: list[Message]) -> BetRejected:
    [rejected] = [e for e in events if isinstance(e, BetRejected)]
    assert any(isinstance(e, WalletRejected) for e in events)  # remembered, moved nothing
    assert not any(isinstance(e, StakeTaken) for e in events)
    return rejected


def placed(events: list[Message]) -> bool:
    return any(isinstance(e, BetPlaced) for e in events)


def test_the_wager_limit_refuses_exactly_the_bet_that_would_pass_it() -> None:
    seat = funded()
    assert isinstance(seat.limits(wager_per_day=9_000)[0], LimitsSet)

    for _ in range(3):  # 3 000 each, called: 9 000 wagered, the limit reached, not passed
        assert placed(seat.play("call"))
    rejected = refusal(seat.bet())

    assert (rejected.reason, rejected.limit) == (
        ProtectionRefusal.LIMIT_REACHED,
        LimitKind.WAGER_PER_DAY,
    )
    assert rejected.version == 4 and "wager_per_day 9000" in rejected.detail


def test_a_fold_wagers_only_its_ante_so_the_limit_leaves_room_for_more() -> None:
    seat = funded()
    seat.limits(wager_per_day=7_000)

    for _ in range(5):  # 1 000 wagered each (the call never made); the fifth: 4 000 + 3 000
        assert placed(seat.play("fold"))
    assert refusal(seat.bet()).limit is LimitKind.WAGER_PER_DAY  # 5 000 + 3 000 > 7 000


def test_the_day_is_the_utc_day_a_new_one_starts_at_midnight() -> None:
    seat = funded()
    seat.limits(wager_per_day=3_000)
    assert placed(seat.play("call"))
    assert refusal(seat.bet()).limit is LimitKind.WAGER_PER_DAY

    seat.now = datetime(2026, 1, 2, 0, 0, tzinfo=NOW.tzinfo)  # just after midnight UTC

    assert placed(seat.bet())


def test_a_limit_counts_the_day_from_the_moment_it_is_set() -> None:
    seat = funded()
    assert placed(seat.play("call"))  # 3 000 wagered before any limit
    seat.limits(wager_per_day=WORST)

    assert placed(seat.play("call"))  # within the limit: what came before is not counted
    assert refusal(seat.bet()).limit is LimitKind.WAGER_PER_DAY


def test_the_loss_limit_counts_losses_net_of_wins() -> None:
    seat = funded()
    seat.limits(loss_per_day=2_000)  # below one bet's worst case (3 000): refused at once

    assert refusal(seat.bet()).limit is LimitKind.LOSS_PER_DAY

    seat.limits(loss_per_day=4_000)
    assert placed(seat.play("fold"))  # lost 1 000
    assert placed(seat.play("fold"))  # its worst case: 1 000 + 3 000 = 4 000, within; lost 2 000
    assert refusal(seat.bet()).limit is LimitKind.LOSS_PER_DAY  # 2 000 + 3 000 > 4 000


def test_a_win_makes_room_under_the_loss_limit() -> None:
    seat = funded()
    seat.limits(loss_per_day=3_000)
    events = seat.play("call")  # the deck wins: the round returns more than it took
    [paid] = [e for e in events if isinstance(e, PayoutCredited)]
    assert paid.amount > 3_000
    day = seat.state.protection.day("p1", "EUR", seat.now)
    assert day.lost == 3_000 - paid.amount < 0

    assert placed(seat.play("fold"))  # ahead: another worst case of 3 000 fits


def test_the_session_length_limit_refuses_the_first_bet_after_it() -> None:
    seat = funded()
    seat.limits(session_length_s=600)
    assert placed(seat.play())
    seat.later(seconds=599)
    assert placed(seat.play())
    seat.later(seconds=1)  # 600 s since the session started

    rejected = refusal(seat.bet())

    assert rejected.limit is LimitKind.SESSION_LENGTH and "lasted 600s" in rejected.detail
    seat.end_session()  # the operator (or the idle timeout) ends it: a new one may start
    assert placed(seat.bet())


def test_a_reality_check_pauses_the_session_and_an_acknowledgement_resumes_it() -> None:
    seat = funded()
    seat.limits(reality_check_s=1_800)
    results = [seat.play("call"), seat.play("fold")]
    seat.later(minutes=30)

    rejected = refusal(seat.bet())

    assert rejected.reason is ProtectionRefusal.REALITY_CHECK and rejected.reality_check
    check = rejected.reality_check
    staked = sum(e.amount for r in results for e in r if isinstance(e, StakeTaken))
    paid = sum(e.amount for r in results for e in r if isinstance(e, PayoutCredited))
    captured = 2 * ANTE  # the first round's call
    assert (check.session_id, check.table_id, check.elapsed_s, check.rounds) == (
        "s1",
        "t1",
        1_800,
        2,
    )
    assert check.net == paid - staked - captured and check.currency == "EUR"
    assert refusal(seat.bet()).reason is ProtectionRefusal.REALITY_CHECK  # until acknowledged

    [ack] = seat.send(seat.command(AcknowledgeRealityCheck, table_id="t1"))
    assert isinstance(ack, RealityCheckAcknowledged) and ack.session_id == "s1"
    assert placed(seat.bet())


def test_a_replay_that_folds_the_ledger_before_the_bets_gives_the_same_protection() -> None:
    seat = funded()
    seat.limits(wager_per_day=100_000, reality_check_s=600)
    for decision in ("call", "fold", "call"):
        seat.play(decision)

    # ADR 019: a timestamp tie between two topics replays the ledger first.
    replayed = initial_state()
    for folded in seat.log:
        for event in sorted(folded, key=lambda e: e.TOPIC != "wallet"):
            evolve(replayed, event)

    assert replayed.protection == seat.state.protection
    assert seat.state.protection.plays[("p1", "t1")].rounds == 3


def test_the_next_reality_check_falls_one_period_after_the_acknowledgement() -> None:
    seat = funded()
    seat.limits(reality_check_s=600)
    assert placed(seat.play())
    seat.later(seconds=700)
    assert refusal(seat.bet()).reason is ProtectionRefusal.REALITY_CHECK
    seat.send(seat.command(AcknowledgeRealityCheck, table_id="t1"))

    seat.later(seconds=599)
    assert placed(seat.play())
    seat.later(seconds=1)
    assert refusal(seat.bet()).reason is ProtectionRefusal.REALITY_CHECK


def test_an_acknowledgement_with_no_check_due_is_refused() -> None:
    seat = funded()
    seat.limits(reality_check_s=600)
    seat.play()

    [answer] = seat.send(seat.command(AcknowledgeRealityCheck, table_id="t1"))

    assert isinstance(answer, ProtectionRejected)
    assert answer.reason is ProtectionRejection.NO_REALITY_CHECK


def test_a_blocked_player_bets_nothing_until_unblocked() -> None:
    seat = funded()
    [blocked] = seat.send(seat.command(BlockPlayer, reason="self-exclusion"))
    assert isinstance(blocked, PlayerBlocked) and blocked.TOPIC == "rounds"

    rejected = refusal(seat.bet())
    assert rejected.reason is OperatorRefusal.PLAYER_BLOCKED

    [unblocked] = seat.send(seat.command(UnblockPlayer))
    assert isinstance(unblocked, PlayerUnblocked)
    assert placed(seat.bet())


def test_the_block_read_back_from_the_rounds_topic_changes_nothing() -> None:
    seat = funded()
    [blocked] = seat.send(seat.command(BlockPlayer))
    [unblocked] = seat.send(seat.command(UnblockPlayer))

    seat.send(blocked)  # the runtime reads the wallet's own records back as inputs
    seat.send(unblocked)

    assert seat.state.protection.blocked == {}


@pytest.mark.parametrize(
    ("model", "fields", "reason"),
    [
        (UnblockPlayer, {}, ProtectionRejection.NOT_BLOCKED),
        (AcknowledgeRealityCheck, {"table_id": "t1"}, ProtectionRejection.NO_REALITY_CHECK),
    ],
)
def test_a_command_that_finds_nothing_to_do_is_refused(
    model: type[Any], fields: dict[str, Any], reason: ProtectionRejection
) -> None:
    seat = funded()
    [answer] = seat.send(seat.command(model, **fields))

    assert isinstance(answer, ProtectionRejected) and answer.reason is reason


def test_blocking_twice_is_refused_already_blocked() -> None:
    seat = funded()
    seat.send(seat.command(BlockPlayer))

    [answer] = seat.send(seat.command(BlockPlayer))

    assert isinstance(answer, ProtectionRejected)
    assert answer.reason is ProtectionRejection.ALREADY_BLOCKED


def test_limits_for_a_player_without_an_account_are_refused_unknown_player() -> None:
    seat = Seat()

    [answer] = seat.limits(wager_per_day=100)

    assert isinstance(answer, ProtectionRejected)
    assert answer.reason is ProtectionRejection.UNKNOWN_PLAYER
    assert seat.state.protection.limits == {}


def test_a_resent_command_is_answered_once_and_a_reused_id_is_a_duplicate() -> None:
    seat = funded()
    command = seat.command(SetLimits, "c-limits", limits=Limits(currency="EUR", wager_per_day=5))
    assert isinstance(seat.send(command)[0], LimitsSet)

    assert seat.send(command) == []  # the same command again
    [answer] = seat.limits("c-limits", wager_per_day=6)  # the id, another body

    assert isinstance(answer, ProtectionRejected) and answer.reason is ProtectionRejection.DUPLICATE
    assert seat.state.protection.limits[("p1", "EUR")].wager_per_day == 5


@pytest.mark.parametrize(
    "limits",
    [
        {"wager_per_day": -1},
        {"loss_per_day": 10**13},
        {"session_length_s": 0},
        {"reality_check_s": 59},
        {"session_length_s": 8 * 24 * 3600},
        {"wager_per_day": 1.5},
    ],
)
def test_negative_or_absurd_limits_do_not_validate(limits: dict[str, Any]) -> None:
    body = {
        "type": "command.set_limits",
        "version": 1,
        "event_id": "e1",
        "command_id": "c1",
        "player_id": "p1",
        "occurred_at": "2026-01-01T00:00:00Z",
        "limits": {"currency": "EUR", **limits},
    }
    with pytest.raises(ContractError) as error:
        parse("commands", json.dumps(body))
    assert error.value.reason.value == "invalid"
    with pytest.raises(ValidationError):
        Limits(currency="EUR", **limits)


def test_in_seamless_mode_a_limit_refuses_the_bet_before_any_debit_is_asked() -> None:
    b = Bridged(operator=FaultyOperator(OperatorWallet(), Faults()))
    b.fund("p1")
    b.bet("r1")
    b.deliver()
    b.play(game("r1"), "fold")  # the player has an account here now
    b.deliver()
    command = SetLimits(
        event_id="e-limits",
        command_id="c-limits",
        player_id="p1",
        occurred_at=NOW,
        limits=Limits(currency="EUR", wager_per_day=250),
    )
    assert isinstance(b.handle(command)[0], LimitsSet)
    debits = len(b.of(DebitRequested))

    events = b.bet("r2")  # its worst case: 100 + 200 > 250

    assert refusal(events).limit is LimitKind.WAGER_PER_DAY
    assert len(b.of(DebitRequested)) == debits  # the operator's wallet was not asked


def test_a_player_blocked_while_his_debit_is_out_gets_no_round_and_his_money_back() -> None:
    b = Bridged(operator=FaultyOperator(OperatorWallet(), Faults(max_delay=2)))
    b.fund("p1", 10_000)
    b.bet("r1")  # the debit is on its way to the operator
    block = BlockPlayer(event_id="e-b", command_id="c-b", player_id="p1", occurred_at=NOW)
    assert isinstance(b.handle(block)[0], PlayerBlocked)

    for _ in range(3):
        b.deliver()  # the operator's Debited, then its RolledBack
    b.tick()
    for _ in range(3):
        b.deliver()

    [rejected] = b.of(BetRejected)
    assert rejected.reason is OperatorRefusal.PLAYER_BLOCKED
    assert b.of(BetPlaced) == [] and b.of(RollbackRequested)
    assert b.operator.wallet.balance("p1", "EUR") == 10_000
    assert b.violations() == []


def test_a_player_may_be_blocked_before_he_ever_deposited() -> None:
    seat = Seat()
    [blocked] = seat.send(seat.command(BlockPlayer, reason="self-exclusion"))
    seat.send(deposit(1_000_000))

    assert isinstance(blocked, PlayerBlocked)
    assert refusal(seat.bet()).reason is OperatorRefusal.PLAYER_BLOCKED
