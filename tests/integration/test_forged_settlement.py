"""A forged Settled on a real broker: the wallet refuses it, no money moves, the audit is clean."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from support.kafka import Cluster
from support.messages import command
from support.rounds import RoundEvents
from support.stack import Stack
from support.wallet import forged_settled

from holdem.core.contracts import Call, Deposit, PlaceBet
from holdem.core.wire.topics import Topics

pytestmark = pytest.mark.kafka

FUNDS = 10_000
GAME = RoundEvents()  # As Ad vs 7c 2d on Ah Ks 9d 4c 3h: ante 10 and call 20 return 40


@pytest.fixture(scope="module")
async def stack(kafka: Cluster) -> AsyncIterator[Stack]:
    shared = Stack(kafka, Topics.unique("forged"))
    await shared.open()
    try:
        yield shared
    finally:
        await shared.close()


async def refusal_of(stack: Stack, player: str, settled_id: str) -> str:
    def found() -> str | None:
        return next(
            (
                m.reason
                for m in stack.events(player)
                if m.type == "round.malfunction" and m.causation_id == settled_id
            ),
            None,
        )

    reason: str = await stack.wait_for(found, f"the wallet's refusal of {settled_id}")
    return reason


async def test_a_forged_settlement_moves_no_money_and_the_audit_stays_clean(stack: Stack) -> None:
    player = f"p-{uuid.uuid4().hex[:10]}"
    await stack.send(command(Deposit, player, currency="EUR", amount=FUNDS))
    await stack.event(player, "wallet.deposited")
    stack.decks.push(GAME.deck, GAME.salt)
    round_id = f"{player}-r"
    await stack.send(command(PlaceBet, player, round_id=round_id, currency="EUR", ante=10))
    await stack.event(player, "round.dealt", round_id)

    before = forged_settled(player, round_id, f"forged-before-{round_id}")
    await stack.send(before, role="rounds")  # undecided round: nothing revealed to check it against
    assert (await refusal_of(stack, player, before.event_id)).startswith("settlement_mismatch")
    assert stack.balances(player)[(player, "EUR", "real")] == (FUNDS - 30, 20)

    await stack.send(command(Call, player, round_id=round_id))
    payout = await stack.event(player, "wallet.payout_credited", round_id)
    after = forged_settled(player, round_id, f"forged-after-{round_id}")
    await stack.send(after, role="rounds")  # the round is paid: a second Settled is refused too
    assert (await refusal_of(stack, player, after.event_id)).startswith("settlement_duplicate")

    [genuine] = [
        m
        for m in stack.events(player)
        if m.type == "round.settled" and not m.event_id.startswith("forged-")
    ]
    assert payout.amount == genuine.total_return == 40
    assert stack.balances(player)[(player, "EUR", "real")] == (FUNDS + 10, 0)
    await stack.assert_sound(player)
