"""A replay longer than the consumer's session timeout (a cold start on a long log, a slow
machine): the service keeps its group membership while it replays, rebuilds once, and then
handles records. aiokafka sends no heartbeat while a rebalance listener runs, so a replay inside
``on_partitions_assigned`` got the member expelled, and the next assignment replayed again."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from support.kafka import Cluster
from support.messages import command
from support.stack import Stack

from holdem.core.contracts import Call, Deposit, PlaceBet
from holdem.core.wire.topics import Topics
from holdem.runtime import loop as runtime_loop
from holdem.runtime import replay as replay_module
from holdem.runtime.replay import replay
from holdem.runtime.topic_setup import ensure_topics

pytestmark = pytest.mark.kafka
LONGER_S = runtime_loop.SESSION_TIMEOUT_MS / 1000 + 2  # each replay outlasts a session
RECORDS = 4_000


async def test_a_replay_longer_than_the_session_rebuilds_once_and_the_service_plays(
    kafka: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    replays: list[Any] = []
    replay = replay_module.replay  # what the loop's Kafka transport reads with

    async def slow_replay(*args: Any, **kwargs: Any) -> int:
        if all(topic.endswith(".holdem.tables") for topic in args[1]):
            return await replay(*args, **kwargs)  # the table book, read whole: not a rebuild
        replays.append(args[1])
        await asyncio.sleep(LONGER_S)
        return await replay(*args, **kwargs)

    monkeypatch.setattr(replay_module, "replay", slow_replay)
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


async def test_a_replay_yields_to_the_event_loop_while_it_folds(kafka: Cluster) -> None:
    """The fold is synchronous: the heartbeats get the loop between batches of a bounded size,
    not once per fetch of several MB (thousands of records at once)."""
    topic = Topics.unique("yield").rounds
    await ensure_topics(kafka.admin, [topic], 1)
    async with AIOKafkaProducer(**kafka.admin.kwargs(), linger_ms=20) as producer:
        sent = [await producer.send(topic, b"{}", key=b"k") for _ in range(RECORDS)]
        await asyncio.gather(*sent)
    runs: list[int] = [0]  # records folded between two turns

    async def other_task() -> None:
        while True:
            runs.append(0)
            await asyncio.sleep(0)

    def fold(*_: object) -> None:
        runs[-1] += 1

    other = asyncio.create_task(other_task())
    try:
        read = await replay(kafka.admin, [topic], [0], fold)
    finally:
        other.cancel()
    assert read == RECORDS == sum(runs)
    assert max(runs) <= replay_module.YIELD_EVERY, f"{max(runs)} records folded at once"


async def test_a_replay_merges_a_partitions_topics_in_the_order_they_were_written(
    kafka: Cluster,
) -> None:
    """A ledger written wholly after its rounds' topic was read is still folded in time order."""
    topics = Topics.unique("merge")
    first, second = topics.rounds, topics.wallet
    await ensure_topics(kafka.admin, [first, second], 1)
    base = int(time.time() * 1000) - 60_000
    async with AIOKafkaProducer(**kafka.admin.kwargs()) as producer:
        for topic, stamps in (
            (second, range(1, 2 * RECORDS, 2)),
            (first, range(0, 2 * RECORDS, 2)),
        ):
            sent = [
                await producer.send(topic, str(n).encode(), key=b"k", timestamp_ms=base + n)
                for n in stamps
            ]
            await asyncio.gather(*sent)
    folded: list[int] = []
    read = await replay(
        kafka.admin, [second, first], [0], lambda topic, value, *_: folded.append(int(value))
    )
    assert read == 2 * RECORDS
    assert folded == list(range(2 * RECORDS))
