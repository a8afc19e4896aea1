"""Issue 18 item 3: a Call or Fold sent right behind its PlaceBet reaches the dealer before the
wallet's BetPlaced. It is refused ``out_of_order`` (not ``unknown_round``), saying the round is
not dealt yet, and the same command sent again after the deal plays the round (ADR 024)."""

from __future__ import annotations

import uuid

import pytest
from support.kafka import Cluster
from support.messages import command
from support.stack import Stack

from holdem.core.contracts import Call, Deposit, Fold, Message, PlaceBet, Reason
from holdem.core.wire.topics import Topics

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]


async def test_a_decision_racing_its_deal_is_refused_out_of_order_and_its_resend_plays(
    kafka: Cluster,
) -> None:
    stack = Stack(kafka, Topics.unique("race"), snapshot_interval_s=0.3)
    await stack.open()
    try:
        decision: type[Message]
        for decision in (Call, Fold):
            player = f"race-{uuid.uuid4().hex[:8]}"
            await stack.send(command(Deposit, player, currency="EUR", amount=10_000))
            await stack.event(player, "wallet.deposited")
            round_id = f"{player}-r1"
            bet = command(PlaceBet, player, round_id=round_id, currency="EUR", ante=100)
            early = command(decision, player, round_id=round_id)
            await stack.send(bet)
            await stack.send(early)  # right behind: the wallet has not placed the bet yet

            refused = await stack.event(player, "round.command_rejected", round_id)
            assert refused.reason == Reason.OUT_OF_ORDER, (refused.reason, refused.detail)
            assert "not dealt yet" in refused.detail, refused.detail
            await stack.event(player, "round.dealt", round_id)
            await stack.send(early)  # the same command (same command_id), after the deal
            kind = "round.called" if decision is Call else "round.folded"
            await stack.event(player, kind, round_id)
            await stack.event(player, "round.settled", round_id)
            await stack.assert_sound(player)
    finally:
        await stack.close()
