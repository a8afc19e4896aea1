"""Promotions through the in-memory wallet service (ADR 029): a promotional credit sent twice
credits once; a free hand played, paid by the rules and counted; a campaign expiring on the
service's own tick; refusals in seamless mode."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from prometheus_client import CollectorRegistry
from support.promotions import credit_promo, grant, play
from support.tables import create_table
from support.wallet import balances, deposit, round_events, verified_settled
from support.wallet_app import wallet

from holdem.core.contracts import PromoReason, Reason, dump


def later(**delta: float) -> datetime:
    return datetime.now(UTC) + timedelta(**delta)


async def test_a_promotional_credit_sent_twice_credits_once_and_is_counted() -> None:
    registry = CollectorRegistry()
    credit = credit_promo(2_500, command_id="k1", campaign_id="prize-7", reason="tournament")
    async with wallet(registry) as w:
        await w.send("commands", credit)
        await w.send("commands", credit.model_copy(update={"event_id": "resent"}))

    [credited] = w.messages("wallet")
    assert (credited.type, credited.amount, credited.campaign_id) == (
        "wallet.promo_credited",
        2_500,
        "prize-7",
    )
    assert balances(w.service.processor.state_for("p1")) == (2_500, 0)
    paid = registry.get_sample_value(
        "holdem_promo_paid_minor_total", {"kind": "credit", "currency": "EUR"}
    )
    assert paid == 2_500


async def test_a_free_hand_is_played_through_the_service_and_pays_its_winnings() -> None:
    registry = CollectorRegistry()
    game = round_events("r1")
    async with wallet(registry) as w:
        await w.send("admin", create_table())
        await w.send("commands", deposit(10_000))
        await w.send("commands", grant(hands=2, ante=1_000, aa_bonus=500, expires_at=later(days=1)))
        await w.send("commands", play("r1"))
        await w.send("rounds", game.dealt(ante=1_000, aa_bonus=500))
        await w.send("rounds", game.called())
        await w.send("rounds", verified_settled(pay_table="standard-1"))

    assert w.types("wallet") == [
        "wallet.deposited",
        "wallet.free_hands_granted",
        "wallet.free_stake_taken",
        "wallet.call_held",
        "wallet.call_captured",
        "wallet.payout_credited",
    ]
    payout = w.messages("wallet")[-1]
    assert (payout.amount, payout.campaign_id) == (6_500, "c1")  # 8 000 less the free 1 500
    assert balances(w.service.processor.state_for("p1")) == (14_500, 0)
    sample = registry.get_sample_value
    assert sample("holdem_free_hands_played_total", {"currency": "EUR"}) == 1
    assert sample("holdem_promo_paid_minor_total", {"kind": "free_stake", "currency": "EUR"}) == (
        1_500
    )
    assert sample("holdem_free_hand_payouts_minor_total", {"currency": "EUR"}) == 6_500


async def test_a_campaign_expires_on_the_wallets_tick() -> None:
    async with wallet() as w:
        await w.send("admin", create_table())
        await w.send("commands", grant(hands=3, expires_at=later(seconds=1.5)))
        for _ in range(50):
            if "wallet.free_hands_expired" in w.types("wallet"):
                break
            await asyncio.sleep(0.1)
        await w.send("commands", play("r1", at=datetime.now(UTC)))

    expired = [m for m in w.messages("wallet") if m.type == "wallet.free_hands_expired"]
    assert [(e.campaign_id, e.remaining) for e in expired] == [("c1", 3)]
    assert w.messages("wallet")[-1].reason is PromoReason.CAMPAIGN_EXPIRED


async def test_absurd_counts_and_amounts_are_dead_lettered_as_invalid() -> None:
    good = dump(grant(hands=5, expires_at=later(days=1)))
    async with wallet() as w:
        await w.send("commands", good.replace(b'"hands":5', b'"hands":-5'), key=b"p1")
        await w.send("commands", good.replace(b'"hands":5', b'"hands":100000'), key=b"p1")
        await w.send("commands", good.replace(b'"ante":1000', b'"ante":-1000'), key=b"p1")
        await w.send("commands", dump(credit_promo(5)).replace(b'"amount":5', b'"amount":0'))

    assert [m.reason for m in w.messages("rejected")] == [Reason.INVALID] * 4
    assert w.types("wallet") == []
