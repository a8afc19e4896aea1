"""Real-Kafka smoke test: the client features the services rely on work against our broker
(as admin: these are Kafka's semantics, the ACLs have tests of their own)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from support.kafka import Cluster

from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics

pytestmark = pytest.mark.kafka


@pytest.fixture
def kafka_admin(kafka: Cluster) -> KafkaConnection:
    return kafka.admin


# Whole-test bound: a broker or client hang fails the test instead of blocking the run.
TEST_BOUND_S = 90
PLAYER = b"player-1"


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


@asynccontextmanager
async def producer(bootstrap: KafkaConnection, **config: Any) -> AsyncIterator[AIOKafkaProducer]:
    p = AIOKafkaProducer(**bootstrap.kwargs(), acks="all", **config)
    await p.start()
    try:
        yield p
    finally:
        await p.stop()


@asynccontextmanager
async def consumer(
    bootstrap: KafkaConnection, *topics: str, **config: Any
) -> AsyncIterator[AIOKafkaConsumer]:
    c = AIOKafkaConsumer(
        *topics,
        **bootstrap.kwargs(),
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        **config,
    )
    await c.start()
    try:
        yield c
    finally:
        await c.stop()


async def partitions_of(bootstrap: KafkaConnection, topic: str) -> list[TopicPartition]:
    admin = AIOKafkaAdminClient(**bootstrap.kwargs())
    await admin.start()
    try:
        (described,) = await admin.describe_topics([topic])
    finally:
        await admin.close()
    return [TopicPartition(topic, p["partition"]) for p in described["partitions"]]


async def read_to_end(
    bootstrap: KafkaConnection, topic: str, isolation_level: str
) -> list[ConsumerRecord]:
    """Every record of `topic` up to its end; for read_committed, once no transaction is open.

    A commit returns before the broker has written its markers, so the last stable offset can
    lag the log end for a moment: wait until it catches up rather than read a partial view.
    """
    parts = await partitions_of(bootstrap, topic)
    async with (
        consumer(bootstrap) as raw,
        consumer(bootstrap, isolation_level=isolation_level) as c,
    ):
        log_end = await raw.end_offsets(parts)
        while (end := await c.end_offsets(parts)) != log_end:
            await asyncio.sleep(0.05)
        c.assign(parts)
        await c.seek_to_beginning(*parts)
        records: list[ConsumerRecord] = []
        while any([await c.position(tp) < end[tp] for tp in parts]):
            for batch in (await c.getmany(timeout_ms=200)).values():
                records.extend(batch)
        return records


async def take(c: AIOKafkaConsumer, count: int) -> list[ConsumerRecord]:
    """The next `count` records of a subscribed consumer (the test bound stops a shortfall)."""
    records: list[ConsumerRecord] = []
    while len(records) < count:
        records.append(await c.getone())
    return records


def values(records: Iterable[ConsumerRecord]) -> list[str]:
    return [r.value.decode() for r in records]


async def group_offsets(bootstrap: KafkaConnection, group: str) -> dict[TopicPartition, int]:
    admin = AIOKafkaAdminClient(**bootstrap.kwargs())
    await admin.start()
    try:
        committed = await admin.list_consumer_group_offsets(group)
        return {tp: meta.offset for tp, meta in committed.items() if meta.offset >= 0}
    finally:
        await admin.close()


async def settled_group_offsets(
    bootstrap: KafkaConnection, group: str, expected: dict[TopicPartition, int]
) -> dict[TopicPartition, int]:
    """The group's offsets once they equal `expected`, or whatever they are after 5 s.

    Offsets committed in a transaction show only once its markers are written, a moment after
    the commit returns.
    """
    loop = asyncio.get_running_loop()
    give_up = loop.time() + 5
    while (offsets := await group_offsets(bootstrap, group)) != expected and loop.time() < give_up:
        await asyncio.sleep(0.05)
    return offsets


async def test_keyed_records_stay_in_order_on_one_partition_per_key(
    kafka_admin: KafkaConnection, topics: Topics
) -> None:
    players = [f"player-{i}" for i in range(6)]
    async with asyncio.timeout(TEST_BOUND_S):
        async with producer(kafka_admin) as p:
            for seq in range(5):
                for player in players:
                    await p.send_and_wait(
                        topics.commands, f"{player}:{seq}".encode(), player.encode()
                    )
        records = await read_to_end(kafka_admin, topics.commands, "read_uncommitted")

    assert len(records) == 30
    for player in players:
        mine = [r for r in records if r.key == player.encode()]
        assert len({r.partition for r in mine}) == 1
        assert values(mine) == [f"{player}:{seq}" for seq in range(5)]
    assert len({r.partition for r in records}) > 1, "six keys should spread over the partitions"


async def test_a_second_group_member_resumes_after_the_committed_offset(
    kafka_admin: KafkaConnection, topics: Topics
) -> None:
    group = unique("resume")
    async with asyncio.timeout(TEST_BOUND_S):
        async with producer(kafka_admin) as p:
            for seq in range(10):
                await p.send_and_wait(topics.wallet, f"entry-{seq}".encode(), PLAYER)
        async with consumer(kafka_admin, topics.wallet, group_id=group) as first:
            seen = await take(first, 4)
            tp = TopicPartition(topics.wallet, seen[-1].partition)
            await first.commit({tp: seen[-1].offset + 1})
        async with consumer(kafka_admin, topics.wallet, group_id=group) as second:
            committed = await second.committed(tp)
            rest = await take(second, 6)

    assert values(seen) == [f"entry-{seq}" for seq in range(4)]
    assert committed == seen[-1].offset + 1
    assert values(rest) == [f"entry-{seq}" for seq in range(4, 10)]


async def test_read_committed_sees_committed_transactions_and_never_aborted_ones(
    kafka_admin: KafkaConnection, topics: Topics
) -> None:
    async with asyncio.timeout(TEST_BOUND_S):
        async with producer(kafka_admin, transactional_id=unique("smoke-tx")) as p:
            async with p.transaction():
                await p.send(topics.rounds, b"committed-1", PLAYER)
                await p.send(topics.rounds, b"committed-2", PLAYER)
            await p.begin_transaction()
            await p.send(topics.rounds, b"aborted-1", PLAYER)
            await p.abort_transaction()
            async with p.transaction():
                await p.send(topics.rounds, b"committed-3", PLAYER)
        committed_view = await read_to_end(kafka_admin, topics.rounds, "read_committed")
        raw_view = await read_to_end(kafka_admin, topics.rounds, "read_uncommitted")

    assert values(committed_view) == ["committed-1", "committed-2", "committed-3"]
    # The aborted record did reach the log: read_committed filtered it, it was not just lost.
    assert "aborted-1" in values(raw_view)


async def test_consume_transform_produce_commits_its_input_offsets_in_the_transaction(
    kafka_admin: KafkaConnection, topics: Topics
) -> None:
    group = unique("transformer")
    async with asyncio.timeout(TEST_BOUND_S):
        async with producer(kafka_admin) as plain:
            for seq in range(7):
                await plain.send_and_wait(topics.commands, f"cmd-{seq}".encode(), PLAYER)
        async with (
            producer(kafka_admin, transactional_id=unique("transformer-tx")) as p,
            consumer(
                kafka_admin, topics.commands, group_id=group, isolation_level="read_committed"
            ) as c,
        ):
            # Step 1 commits: outputs and the input offset become visible together.
            batch = await take(c, 5)
            tp = TopicPartition(topics.commands, batch[-1].partition)
            async with p.transaction():
                for record in batch:
                    await p.send(topics.rounds, record.value.upper(), record.key)
                await p.send_offsets_to_transaction({tp: batch[-1].offset + 1}, group)
            expected = {tp: batch[-1].offset + 1}
            after_commit = await settled_group_offsets(kafka_admin, group, expected)
            # Step 2 aborts: neither its outputs nor its offset may show.
            batch2 = await take(c, 2)
            await p.begin_transaction()
            for record in batch2:
                await p.send(topics.rounds, record.value.upper(), record.key)
            await p.send_offsets_to_transaction({tp: batch2[-1].offset + 1}, group)
            await p.abort_transaction()
        output = await read_to_end(kafka_admin, topics.rounds, "read_committed")
        # read_to_end waited for the abort's markers: any offset it were to commit would show now.
        after_abort = await group_offsets(kafka_admin, group)
        # A restarted member of the group replays from the last committed input offset.
        async with consumer(
            kafka_admin, topics.commands, group_id=group, isolation_level="read_committed"
        ) as restarted:
            replayed = await take(restarted, 2)

    assert values(output) == [f"CMD-{seq}" for seq in range(5)]
    assert after_commit == expected
    assert after_abort == expected
    assert values(replayed) == ["cmd-5", "cmd-6"]
