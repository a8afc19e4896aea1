"""The SDK against real services: refusals are typed, streams and balances follow the log."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from support.rounds import SALT, deck_for
from support.stack import Stack

from holdem.client import Operator, Player, Refused
from holdem.core.contracts import Message, Reason, Settled

pytestmark = pytest.mark.kafka

STEP_S = 60.0  # bounds each wait for an answer; a lost one fails the test


def player_id() -> str:
    return f"sdk-{uuid.uuid4().hex[:10]}"


async def test_refusals_raise_with_their_stable_reason(stack: Stack) -> None:
    async with Operator(stack.kafka.operator, stack.topics) as operator:
        bob = Player(operator, player_id(), step_s=STEP_S)
        with pytest.raises(Refused) as poor:
            await bob.withdraw(1)
        await bob.deposit(1_000)
        with pytest.raises(Refused) as small:
            await bob.bet(ante=5)  # the stack's table minimum is 10

    assert poor.value.reason is Reason.INSUFFICIENT_FUNDS
    assert small.value.reason is Reason.BELOW_MINIMUM


async def test_the_stream_and_the_balance_follow_a_round(stack: Stack) -> None:
    carol_id = player_id()
    seen: list[Message] = []

    async def follow(operator: Operator) -> None:
        async for event in operator.stream():
            if event.player_id == carol_id:
                seen.append(event)

    stack.decks.push(deck_for("AsAd", "7c2d", "AhKs9d4c3h"), SALT)
    async with Operator(stack.kafka.operator, stack.topics) as operator:
        follower = asyncio.create_task(follow(operator))
        carol = Player(operator, carol_id, step_s=STEP_S)
        assert await operator.balance(carol_id) is None
        await carol.deposit(5_000, command_id=f"{carol_id}-tx1")
        played = await carol.bet(ante=100, aa_bonus=50)
        assert (await played.dealt()).player_cards == ("As", "Ad")
        await played.fold()
        outcome = await played.outcome()
        balance = await operator.balance(carol_id)
        follower.cancel()

    assert outcome.settled is not None and outcome.settled.decision == "fold"
    assert outcome.revealed is not None and outcome.revealed.dealer_cards == ("7c", "2d")
    assert balance == outcome.balance == 5_000 - 150 + outcome.settled.total_return
    kinds = [event.type for event in seen]
    assert kinds.count("round.settled") == 1 and "wallet.deposited" in kinds, kinds
    assert any(isinstance(e, Settled) for e in seen)
