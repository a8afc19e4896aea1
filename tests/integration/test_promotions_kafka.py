"""Promotions and currencies on a real broker, the three services and the query service through
the SDK (ADR 029): a promotional credit sent twice credits once; a campaign of 5 free hands
played to its end, one cancelled mid-way, one expired, each paying what the ADR says, and
each shown by the query service as the SDK asks (with a player's limits and block); a free
hand in seamless mode, whose operator wallet is asked for the call alone; a JPY and a BHD table
played through, their summaries in their own units; the audit clean after each."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from support.kafka import Cluster
from support.rounds import SALT, deck_for
from support.seamless_stack import bridge
from support.stack import WAIT_S, Stack, running_stack
from support.tables import terms

from holdem.client.commands import command
from holdem.client.operator import Operator, TableRefused
from holdem.client.player import Player, PromoRefused, Refused
from holdem.client.queries import QueryClient, QueryRefusedError
from holdem.client.seamless_sim import Faults, FaultyOperator, OperatorWallet
from holdem.core.contracts import (
    CreditPromo,
    FreeHandsExpired,
    PayoutCredited,
    PromoCredited,
    PromoReason,
    PromotionsReply,
    ProtectionReply,
    Reason,
    Settled,
)

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]

ANTE, BONUS = 1_000, 500
WIN = deck_for("AsAd", "7c2d", "AhKs9d4c3h")  # ante 1 to 1, bonus 7 to 1, dealer unqualified
LOSE = deck_for("7h2c", "KcKd", "Qs9h5d4c3s")  # the dealer's kings win ante and call
TIE = deck_for("7h2c", "8d3c", "AsKdQhJcTs")  # the board's straight for both: a push


@pytest.fixture
async def stack(kafka: Cluster) -> AsyncIterator[Stack]:
    async with running_stack(kafka, "promotions", "query") as running:
        yield running


def winnings(settled: Settled) -> int:
    """ADR 029's payout of a free hand of ANTE + BONUS, from its Settled."""
    return (
        max(0, settled.ante_return - ANTE)
        + max(0, settled.bonus_return - BONUS)
        + settled.call_return
    )


async def free_hand(stack: Stack, player: Player, campaign: str, decision: str = "c") -> Any:
    """One free hand played to its payout; (Settled, PayoutCredited) as the log has them."""
    played = await player.play_free_hand(campaign)
    await played.dealt()
    await (played.call() if decision == "c" else played.fold())
    await played.outcome()
    settled = await stack.event(player.player_id, "round.settled", played.round_id)
    payout = await stack.event(player.player_id, "wallet.payout_credited", played.round_id)
    return settled, payout


async def answered(ask: Callable[[], Awaitable[Any]], shown: Callable[[Any], bool]) -> Any:
    """The first reply to ``ask()`` that ``shown`` accepts: the query service reads the wallet
    and rounds topics as they come, with no order against the queries topic, so an answer may
    lag the last event by a moment (bounded by WAIT_S, polled)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            reply = await ask()
        except QueryRefusedError:
            reply = None
        if reply is not None and shown(reply):
            return reply
        if time.monotonic() > deadline:
            raise AssertionError(f"the query service never showed it; last reply: {reply}")
        await asyncio.sleep(0.2)


def campaigns(reply: PromotionsReply) -> list[tuple[str, int, int, str]]:
    return [(c.campaign_id, c.played, c.remaining, c.status) for c in reply.campaigns]


async def promotions_of(queries: QueryClient, player_id: str, want: list[Any]) -> Any:
    """The player's campaigns as the query service shows them, once they are ``want``."""
    reply = await answered(lambda: queries.promotions(player_id), lambda r: campaigns(r) == want)
    return campaigns(reply)


async def test_free_hand_campaigns_and_promotional_credits_pay_what_the_rules_say(
    stack: Stack, kafka: Cluster
) -> None:
    run = uuid.uuid4().hex[:6]
    table, alice, bob, carol = f"free-{run}", f"a-{run}", f"b-{run}", f"c-{run}"
    async with (
        Operator(kafka.admin, stack.topics) as admin,
        Operator(kafka.operator, stack.topics) as operator,
    ):
        await admin.create_table(table, terms(decision_timeout_s=300))
        players = {name: Player(operator, name, table_id=table) for name in (alice, bob, carol)}
        for player in players.values():
            await player.deposit(100_000)

        # A promotional credit, sent twice with one command id: credited once.
        credit = await operator.credit_promo(
            alice, 2_500, campaign_id="sorry-1", reason="outage", command_id=f"k-{run}"
        )
        again = command(
            CreditPromo,
            alice,
            command_id=f"k-{run}",
            currency="EUR",
            amount=2_500,
            campaign_id="sorry-1",
            reason="outage",
        )
        await operator.send(again)
        with pytest.raises(PromoRefused) as unknown:
            await operator.credit_promo(bob, 5, campaign_id="x", reason="y", currency="XYZ")

        later = datetime.now(UTC) + timedelta(hours=1)
        grants = await operator.grant_free_hands(
            [alice, bob], table_id=table, hands=5, ante=ANTE, aa_bonus=BONUS,
            expires_at=later, campaign_id="welcome",
        )  # fmt: skip
        # Carol's campaign runs 20 s: she plays one hand at once, the rest expire.
        soon = datetime.now(UTC) + timedelta(seconds=20)
        [expiring] = (
            await operator.grant_free_hands(
                carol, table_id=table, hands=3, ante=ANTE, aa_bonus=BONUS, expires_at=soon,
                campaign_id="flash",
            )
        ).values()  # fmt: skip
        carol_settled, carol_payout = await free_hand(stack, players[carol], "flash")

        # Alice plays her five free hands to the end, on known decks.
        paid = []
        for deck, decision in ((WIN, "c"), (LOSE, "c"), (TIE, "c"), (WIN, "f"), (WIN, "c")):
            stack.decks.push(deck, SALT)
            settled, payout = await free_hand(stack, players[alice], "welcome", decision)
            assert payout.amount == winnings(settled) and payout.campaign_id == "welcome"
            paid.append(payout.amount)
        with pytest.raises(Refused) as used_up:
            await players[alice].play_free_hand("welcome")
        [alice_campaign] = await players[alice].free_hands()

        # Bob's campaign is cancelled after two hands.
        for _ in range(2):
            settled, payout = await free_hand(stack, players[bob], "welcome")
            assert payout.amount == winnings(settled)
        cancelled = await operator.cancel_free_hands(bob, "welcome")
        with pytest.raises(Refused) as after_cancel:
            await players[bob].play_free_hand("welcome")

        # Carol's expires after her one hand: the wallet's tick writes it.
        assert carol_payout.amount == winnings(carol_settled)
        expired = await stack.wait_for(
            lambda: next(
                (e for e in stack.events(carol, "wallet") if isinstance(e, FreeHandsExpired)),
                None,
            ),
            "carol's campaign to expire",
            timeout=WAIT_S,
        )
        with pytest.raises(Refused) as after_expiry:
            await players[carol].play_free_hand("flash")
        await asyncio.sleep(0.5)  # the resent credit had time to be (not) applied
        await stack.assert_sound(alice, bob, carol)

        # The operator reads it all back through the query service (issue 29), and a player's
        # protection: carol's limits, bob blocked (his session at the table ended by it).
        async with QueryClient(kafka.operator, stack.topics) as queries:
            wanted = {
                alice: [("welcome", 5, 0, "active")],
                bob: [("welcome", 2, 0, "cancelled")],
                carol: [("flash", 1, 0, "expired")],
            }
            shown = {
                name: await promotions_of(queries, name, want) for name, want in wanted.items()
            }
            await answered(
                lambda: queries.protection(bob),
                lambda r: [s.table_id for s in r.sessions] == [table] and not r.blocked,
            )
            await operator.set_limits(carol, loss_per_day=50_000)
            await operator.block(bob, "self-exclusion")
            carols: ProtectionReply = await answered(
                lambda: queries.protection(carol), lambda r: bool(r.limits)
            )
            bobs: ProtectionReply = await answered(
                lambda: queries.protection(bob), lambda r: r.blocked and not r.sessions
            )

    credits = [e for e in stack.events(alice, "wallet") if isinstance(e, PromoCredited)]
    assert (
        [(c.amount, c.campaign_id) for c in credits]
        == [(2_500, "sorry-1")]
        == [(credit.amount, credit.campaign_id)]
    )
    assert unknown.value.reason is Reason.UNSUPPORTED_CURRENCY
    assert {p: g.type for p, g in grants.items()} == dict.fromkeys(
        (alice, bob), "wallet.free_hands_granted"
    )
    assert expiring.type == "wallet.free_hands_granted"
    # WIN called pays 1 000 + 3 500 of winnings and the call's 2 000 push; LOSE nothing; TIE
    # the call's push only (the free ante's push is not the player's); a fold nothing.
    assert paid == [6_500, 0, 2_000, 0, 6_500]
    assert used_up.value.reason is PromoReason.NO_FREE_HANDS
    assert (alice_campaign.remaining, alice_campaign.played) == (0, 5)
    assert cancelled.remaining == 3
    assert after_cancel.value.reason is PromoReason.CAMPAIGN_CANCELLED
    assert (expired.campaign_id, expired.remaining) == ("flash", 2)
    assert after_expiry.value.reason is PromoReason.CAMPAIGN_EXPIRED
    alice_money = [e for e in stack.events(alice, "wallet") if hasattr(e, "available")]
    # 100 000 deposited, 2 500 credited, and the call's net of the five hands: +4 500, -2 000,
    # 0, 0, +4 500 (the promotion paid every ante and bonus)
    assert alice_money[-1].available == 100_000 + 2_500 + 4_500 - 2_000 + 4_500
    free_payouts = [
        e for e in stack.events(alice, "wallet") if isinstance(e, PayoutCredited) and e.campaign_id
    ]
    assert len(free_payouts) == 5
    assert shown == wanted  # each campaign as the wallet's events say (above)
    assert [(lim.currency, lim.loss_per_day, lim.wager_per_day) for lim in carols.limits] == [
        ("EUR", 50_000, None)
    ]
    assert not carols.blocked and bobs.blocked_reason == "self-exclusion"


@pytest.mark.parametrize(
    ("currency", "chips", "ante", "bonus", "line"),
    [
        ("JPY", (100, 500, 1_000), 1_000, 500, "ANTE 1000 → 2000 · CALL 2000 → 2000"),
        ("BHD", (500, 1_000, 5_000), 1_000, 500, "ANTE 1.000 → 2.000 · CALL 2.000 → 2.000"),
    ],
)
async def test_a_jpy_and_a_bhd_table_play_through_in_their_own_units(
    stack: Stack,
    kafka: Cluster,
    currency: str,
    chips: tuple[int, ...],
    ante: int,
    bonus: int,
    line: str,
) -> None:
    run = uuid.uuid4().hex[:6]
    table, name = f"{currency.lower()}-{run}", f"{currency.lower()}-p-{run}"
    table_terms = terms(
        currency=currency, ante_min=chips[0], ante_max=100 * chips[-1], bonus_max=10 * chips[-1],
        chips=chips, decision_timeout_s=300,
    )  # fmt: skip
    async with (
        Operator(kafka.admin, stack.topics) as admin,
        Operator(kafka.operator, stack.topics) as operator,
        QueryClient(kafka.operator, stack.topics) as queries,
    ):
        await admin.create_table(table, table_terms)
        with pytest.raises(TableRefused) as unknown:
            await admin.create_table(f"x-{run}", terms(currency="XYZ"))
        player = Player(operator, name, currency=currency, table_id=table)
        await player.deposit(1_000_000)
        stack.decks.push(WIN, SALT)
        played = await player.bet(ante, bonus)
        await played.dealt()
        await played.call()
        outcome = await played.outcome()
        await stack.assert_sound(name)
        summary = (await queries.summary(name, played.round_id)).text

    settled = outcome.settled
    assert settled is not None and settled.currency == currency == played.placed.currency
    assert (settled.ante_return, settled.call_return, settled.bonus_return) == (
        2 * ante,
        2 * ante,
        8 * bonus,
    )
    assert outcome.balance == 1_000_000 + ante + 7 * bonus  # ante 1 to 1, bonus 7 to 1, push
    assert summary.splitlines()[0].endswith(currency) and line in summary.splitlines()[-1]
    assert unknown.value.reason is Reason.UNSUPPORTED_CURRENCY


async def test_a_seamless_free_hand_asks_the_operator_for_the_call_alone_and_names_the_campaign(
    kafka: Cluster,
) -> None:
    run = uuid.uuid4().hex[:6]
    table, name = f"sfree-{run}", f"sf-{run}"
    wallet = OperatorWallet(opening=10_000)
    async with (
        bridge(kafka, FaultyOperator(wallet, Faults())) as seamless,
        Operator(kafka.admin, seamless.topics) as admin,
        Operator(kafka.operator, seamless.topics) as operator,
    ):
        await admin.create_table(table, terms(decision_timeout_s=300))
        later = datetime.now(UTC) + timedelta(hours=1)
        await operator.grant_free_hands(
            name, table_id=table, hands=2, ante=ANTE, aa_bonus=BONUS, expires_at=later,
            campaign_id="vip",
        )  # fmt: skip
        seamless.decks.push(WIN, SALT)
        settled, payout = await free_hand(seamless, Player(operator, name, table_id=table), "vip")
        credit = await seamless.event(name, "seamless.credit_requested", settled.round_id)
        await seamless.assert_sound(name)

    debit = next(m for m in seamless.events(name, "wallet") if m.type.endswith("debit_requested"))
    assert (debit.amount, debit.campaign_id) == (2 * ANTE, "vip")  # no debit for the free part
    assert (payout.amount, credit.amount, credit.campaign_id) == (6_500, 6_500, "vip")
    assert wallet.balance(name, "EUR") == 10_000 - 2 * ANTE + 6_500
