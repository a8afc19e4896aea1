"""The wallet service on faststream's in-memory broker: commands and round events in, money out."""

from __future__ import annotations

from functools import partial

from prometheus_client import CollectorRegistry
from structlog.testing import capture_logs
from support.deciders import NOW
from support.wallet import (
    balances,
    deposit,
    place_bet,
    round_events,
    settled,
    verified_settled,
    voided,
)
from support.wallet_app import wallet

from holdem.core.contracts import GrantFun, Reason, parse
from holdem.wallet.state import initial_state

MALF = "round.malfunction"


async def test_a_bet_is_placed_on_the_round_log_and_its_money_moved_in_the_ledger() -> None:
    async with wallet() as w:
        await w.send("commands", deposit(10_000))
        await w.send("commands", place_bet("r1", ante=1_000, aa_bonus=500))

    assert w.types("wallet") == ["wallet.deposited", "wallet.stake_taken", "wallet.call_held"]
    assert w.types("rounds") == ["round.bet_placed"]
    assert balances(w.service.processor.state_for("p1")) == (6_500, 2_000)


async def test_a_called_and_settled_round_captures_the_call_and_credits_the_return() -> None:
    async with wallet() as w:
        await w.send("commands", deposit(10_000))
        await w.send("commands", place_bet("r1", ante=1_000, aa_bonus=500))
        await w.send("rounds", round_events("r1").dealt())
        await w.send("rounds", round_events("r1").called())
        await w.send("rounds", verified_settled())
        await w.send("rounds", verified_settled())  # redelivered

    assert w.types("wallet")[3:] == ["wallet.call_captured", "wallet.payout_credited"]
    assert balances(w.service.processor.state_for("p1")) == (14_500, 0)


async def test_a_forged_settlement_moves_no_money_and_is_refused_on_the_round_log() -> None:
    forged = settled(999_999_999, ante=1_000, aa_bonus=500, call=2_000, event_id="forged")
    registry = CollectorRegistry()
    async with wallet(registry) as w:
        await w.send("commands", deposit(10_000))
        await w.send("commands", place_bet("r1", ante=1_000, aa_bonus=500))
        await w.send("rounds", round_events("r1").dealt())
        await w.send("rounds", round_events("r1").called())
        await w.send("rounds", forged)
        after_forgery = balances(w.service.processor.state_for("p1"))
        await w.send("rounds", verified_settled())
        await w.send("rounds", forged.model_copy(update={"event_id": "forged-again"}))

    assert after_forgery == (6_500, 0)
    assert w.types("wallet")[3:] == ["wallet.call_captured", "wallet.payout_credited"]
    refusals = [m for m in map(partial(parse, "rounds"), w.seen["rounds"]) if m.type == MALF]
    assert [(m.source, m.causation_id, m.reason.split(":")[0]) for m in refusals] == [
        ("wallet", "forged", "settlement_mismatch"),
        ("wallet", "forged-again", "settlement_duplicate"),
    ]
    count = registry.get_sample_value
    assert count("holdem_settlement_mismatch_total", {"reason": "mismatch"}) == 1
    assert count("holdem_settlement_mismatch_total", {"reason": "duplicate"}) == 1


async def test_a_voided_round_is_refunded_once() -> None:
    async with wallet() as w:
        await w.send("commands", deposit(10_000))
        await w.send("commands", place_bet("r1", ante=1_000, aa_bonus=500))
        await w.send("rounds", voided())
        await w.send("rounds", voided())

    assert w.types("wallet")[3:] == ["wallet.call_released", "wallet.stakes_refunded"]
    assert balances(w.service.processor.state_for("p1")) == (10_000, 0)


async def test_a_resent_command_publishes_nothing_new() -> None:
    bet = place_bet("r1", command_id="b1")
    async with wallet() as w:
        await w.send("commands", deposit(10_000))
        await w.send("commands", bet)
        await w.send("commands", bet.model_copy(update={"event_id": "resent-b1"}))

    assert w.types("rounds") == ["round.bet_placed"]
    assert len(w.seen["wallet"]) == 3


async def test_a_refused_bet_is_reported_on_the_round_and_remembered_in_the_ledger() -> None:
    async with wallet() as w:
        await w.send("commands", place_bet("r1", ante=1_000))

    [rejected] = [parse("rounds", raw) for raw in w.seen["rounds"]]
    assert (rejected.type, rejected.reason, rejected.round_id) == (
        "round.bet_rejected",
        Reason.INSUFFICIENT_FUNDS,
        "r1",
    )
    assert w.types("wallet") == ["wallet.rejected"]


async def test_unreadable_commands_of_unknown_or_wallet_types_are_rejected_by_the_wallet() -> None:
    async with wallet() as w:
        await w.send("commands", b'{"type": "command.teleport", "player_id": "p1"}')
        await w.send("commands", b'{"type": "command.deposit", "player_id": "p1"}')
        await w.send("commands", b'{"type": "command.call", "player_id": "p1"}')  # the dealer's

    reasons = [parse("rejected", raw).reason for raw in w.seen["rejected"]]
    assert reasons == [Reason.UNKNOWN_TYPE, Reason.INVALID]


async def test_replaying_the_published_ledger_rebuilds_the_live_state() -> None:
    async with wallet() as w:
        await w.send("commands", deposit(10_000))
        await w.send("commands", place_bet("r1", ante=1_000, aa_bonus=500))
        await w.send("rounds", round_events("r1").dealt())
        await w.send("rounds", round_events("r1").folded())
        await w.send("commands", place_bet("r2", ante=100_000))

    processor = w.service.processor
    live = processor.state_for("p1")
    processor.reset()
    assert processor.state_for("p1") == initial_state()
    for role in ("wallet", "rounds"):
        for record in w.log.records(role):
            assert record.value is not None
            topic = processor.topic_of(role)
            processor.fold(topic, record.value, record.key, record.partition, record.headers)
    assert processor.state_for("p1") == live and live.evidence_of("p1", "r1").reveal is not None


async def test_a_tombstone_on_the_commands_topic_is_dead_lettered_with_a_log_line() -> None:
    """Issue 29 defect 4: a record without a value never vanishes: it is refused malformed."""
    async with wallet() as w:
        with capture_logs() as lines:
            await w.log.publish("commands", None, b"p1")
        await w.send("commands", deposit(10_000))

    [letter] = w.messages("rejected")
    assert letter.reason is Reason.MALFORMED and "tombstone" in letter.detail
    assert (letter.service, letter.player_id, letter.raw_size) == ("wallet", "p1", 0)
    assert letter.source_key == "p1" and letter.source_offset == 0
    assert [x["event"] for x in lines if x.get("reason") == "malformed"] == ["rejected"]
    assert w.types("wallet") == ["wallet.deposited"]  # and the next command is answered


async def test_money_comes_in_only_in_a_currency_of_the_currency_table() -> None:
    """Issue 29 defect 14: one rule for every credit (Deposit, GrantFun, ResetFun, CreditPromo,
    a table's currency): ISO 4217 or a configured code, else unsupported_currency."""
    fun_in_qqq = GrantFun(
        event_id="e-fun", command_id="c-fun", player_id="p1", occurred_at=NOW,
        currency="QQQ", amount=500,
    )  # fmt: skip
    async with wallet() as w:
        await w.send("commands", deposit(2_500, currency="QQQ", command_id="c-qqq"))
        await w.send("commands", fun_in_qqq)
        await w.send("commands", deposit(2_500, currency="BTC", command_id="c-btc"))

    refused = [m for m in w.messages("wallet") if m.type == "wallet.rejected"]
    assert [(m.command_id, m.reason) for m in refused] == [
        ("c-qqq", Reason.UNSUPPORTED_CURRENCY),
        ("c-fun", Reason.UNSUPPORTED_CURRENCY),
    ]
    assert w.types("wallet")[-1] == "wallet.deposited"  # BTC: a configured code (the default)
    state = w.service.processor.state_for("p1")
    assert balances(state, currency="QQQ") == (0, 0)
    assert balances(state, currency="BTC") == (2_500, 0)


async def test_a_reused_command_id_is_answered_duplicate_each_time_and_its_owner_never_again() -> (
    None
):
    """Issue 29 defect 5, as the guide (section 8) now says: every record reusing a command_id
    for another body gets its own `duplicate` (nothing of it is remembered, so bad input grows
    no state, and a lost answer comes back on a resend); the command that owns the id, resent,
    answers nothing."""
    first = deposit(1_000, command_id="c-1")
    async with wallet() as w:
        await w.send("commands", first)
        await w.send("commands", deposit(2_000, command_id="c-1"))
        await w.send("commands", deposit(2_000, command_id="c-1"))
        await w.send("commands", first.model_copy(update={"event_id": "resent"}))

    refused = [m for m in w.messages("wallet") if m.type == "wallet.rejected"]
    assert [(m.command_id, m.reason) for m in refused] == [("c-1", Reason.DUPLICATE)] * 2
    assert refused[0].event_id != refused[1].event_id
    assert w.types("wallet") == ["wallet.deposited", "wallet.rejected", "wallet.rejected"]
    assert balances(w.service.processor.state_for("p1")) == (1_000, 0)
