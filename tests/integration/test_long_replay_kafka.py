"""A replay longer than the consumer's session timeout (a cold start on a long log, a slow
machine): the service keeps its group membership while it replays, rebuilds once, and then
handles records. aiokafka sends no heartbeat while a rebalance listener runs, so a replay inside
``on_partitions_assigned`` got the member expelled, and the next assignment replayed again."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from support.kafka import Cluster
from support.messages import command
from support.stack import Stack

from holdem.core.contracts import Call, Deposit, PlaceBet
from holdem.runtime import loop as runtime_loop
from holdem.runtime.topics import Topics

pytestmark = pytest.mark.kafka
LONGER_S = runtime_loop.SESSION_TIMEOUT_MS / 1000 + 2  # each replay outlasts a session


async def test_a_replay_longer_than_the_session_rebuilds_once_and_the_service_plays(
    kafka: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    replays: list[Any] = []
    replay = runtime_loop.replay

    async def slow_replay(*args: Any, **kwargs: Any) -> int:
        replays.append(args[1])
        await asyncio.sleep(LONGER_S)
        return await replay(*args, **kwargs)

    monkeypatch.setattr(runtime_loop, "replay", slow_replay)
    stack = Stack(kafka, Topics.unique("slow"))
    await stack.open()
    try:
        player, round_id = f"l-{uuid.uuid4().hex[:8]}", f"r-{uuid.uuid4().hex[:6]}"
        await stack.send(command(Deposit, player, currency="EUR", amount=10_000))
        await stack.event(player, "wallet.deposited")
        await stack.send(command(PlaceBet, player, round_id=round_id, currency="EUR", ante=10))
        await stack.event(player, "round.dealt", round_id)
        await stack.send(command(Call, player, round_id=round_id))
        await stack.event(player, "wallet.payout_credited", round_id)
        # Long enough for an expelled member to be assigned and to replay again.
        await asyncio.sleep(LONGER_S + 2)
        assert len(replays) == 3, f"{len(replays)} replays of 3 services: {replays}"
        await stack.assert_sound(player)
    finally:
        await stack.close()
