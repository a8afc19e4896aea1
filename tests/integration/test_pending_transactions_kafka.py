"""Transactions still open when an instance takes partitions over, on the real broker: the
state it rebuilds and the offsets it starts from wait for them to end (issue 21, the zombie; the
broker-outage test's round taken for never dealt).

A producer frozen mid-transaction (a paused container, a settlement stopped under load) holds
its records and its offset commit in an open transaction. Read to the last stable offset, a
replay would miss records written before it started, for good; asked the committed offset the old
way, the coordinator answers the previous one, and the batch is decided twice."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Sequence

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.consumer import group_coordinator
from aiokafka.errors import KafkaError
from aiokafka.protocol.commit import OffsetFetchRequest
from support.kafka import Cluster

from holdem.runtime import kafka_internals
from holdem.runtime.kafka import KafkaProducer
from holdem.runtime.replay import replay
from holdem.runtime.topic_setup import ensure_topics

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(120)]

OPEN_FOR_S = 2.0  # how long the transaction stays open while the reader waits


@pytest.fixture
async def topic(kafka: Cluster) -> str:
    name = f"pending-{uuid.uuid4().hex[:8]}"
    await ensure_topics(kafka.admin, [name], partitions=1, wait=60)
    return name


@pytest.fixture
async def producer(kafka: Cluster, topic: str) -> AsyncIterator[AIOKafkaProducer]:
    made = AIOKafkaProducer(**kafka.admin.kwargs(), transactional_id=f"{topic}-txn")
    await made.start()
    try:
        yield made
    finally:
        await made.stop()


async def committed_records(
    producer: AIOKafkaProducer, topic: str, values: Sequence[bytes]
) -> None:
    async with producer.transaction():
        for value in values:
            await producer.send(topic, value=value, partition=0)


@pytest.mark.parametrize("outcome", ["commit", "abort"])
async def test_a_replay_waits_for_a_transaction_open_when_it_began(
    kafka: Cluster, topic: str, producer: AIOKafkaProducer, outcome: str
) -> None:
    await committed_records(producer, topic, [b"before"])
    await producer.begin_transaction()
    await producer.send_and_wait(topic, value=b"open", partition=0)
    read: list[bytes] = []
    task = asyncio.create_task(
        replay(kafka.admin, [topic], [0], lambda t, value, k, p, h: read.append(value))
    )
    await asyncio.sleep(OPEN_FOR_S)
    # Ended at the last stable offset, it would have read "before" only and be done.
    assert not task.done(), read
    if outcome == "commit":
        await producer.commit_transaction()
    else:
        await producer.abort_transaction()
    count = await asyncio.wait_for(task, 30)
    expected = [b"before", b"open"] if outcome == "commit" else [b"before"]
    assert read == expected
    assert count == len(expected)


async def first_offset(consumer: AIOKafkaConsumer, within_s: float) -> int | None:
    """The offset of the first record the group member gets within ``within_s``, if any."""
    deadline = asyncio.get_running_loop().time() + within_s
    while asyncio.get_running_loop().time() < deadline:
        batch = await consumer.getmany(timeout_ms=200)
        for records in batch.values():
            return int(records[0].offset)
    return None


async def member(kafka: Cluster, topic: str) -> AIOKafkaConsumer:
    consumer = AIOKafkaConsumer(
        topic,
        **kafka.admin.kwargs(),
        group_id=topic,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
    )
    await consumer.start()
    return consumer


@pytest.mark.parametrize("stable", [True, False], ids=["require-stable", "aiokafka-v3"])
async def test_a_new_member_starts_from_the_offsets_a_transaction_still_open_commits(
    kafka: Cluster,
    topic: str,
    producer: AIOKafkaProducer,
    stable: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The frozen member's batch: records 0-9 read, its transaction commits offset 7 (it decided
    0-6) and is still open when a new member joins the group."""
    await committed_records(producer, topic, [b"%d" % n for n in range(10)])
    kafka_internals.install()
    if not stable:  # the defect this closes, shown with aiokafka's own request
        monkeypatch.setattr(group_coordinator, "OffsetFetchRequest", OffsetFetchRequest)
    await producer.begin_transaction()
    await producer.send_offsets_to_transaction({TopicPartition(topic, 0): 7}, topic)
    consumer = await member(kafka, topic)
    try:
        early = await first_offset(consumer, OPEN_FOR_S)
        if stable:
            assert early is None  # no position while the offsets are not stable
        else:
            assert early == 0  # the previous commit (none): it would decide 0-6 again
            return
        await producer.commit_transaction()
        assert await first_offset(consumer, 30) == 7
    finally:
        await consumer.stop()
        if producer._txn_manager is not None and producer._txn_manager.is_in_transaction():
            await producer.abort_transaction()


async def test_a_transaction_the_broker_keeps_open_is_ended_by_renewing_its_transactional_id(
    kafka: Cluster, topic: str, producer: AIOKafkaProducer
) -> None:
    """Issue 26 item 5 (ADR 033's open case): after a disk-full halt a restarted broker kept a
    dealer's transaction open for two minutes, past its 15 s timeout, and the rebuild waited out
    its 120 s bound. A transaction timeout of 15 minutes stands in for the broker that does not
    abort: the rebuild renews its transactional id once (``stuck``), a new epoch that makes the
    broker abort it, and reads on without it."""
    await committed_records(producer, topic, [b"before"])
    stale_id = f"{topic}-stale"
    stale = AIOKafkaProducer(
        **kafka.admin.kwargs(), transactional_id=stale_id, transaction_timeout_ms=900_000
    )
    await stale.start()
    renewed: list[KafkaProducer] = []

    async def renew() -> None:
        fresh = KafkaProducer(kafka.admin, stale_id)
        await fresh.start()  # InitProducerId: a new epoch of the id
        renewed.append(fresh)

    try:
        await stale.begin_transaction()
        await stale.send_and_wait(topic, value=b"left open", partition=0)
        read: list[bytes] = []
        # Without the renewal the replay waits for it (to its bound, 3 s here).
        with pytest.raises(TimeoutError):
            await replay(kafka.admin, [topic], [0], lambda *r: None, timeout_s=3)
        count = await replay(
            kafka.admin,
            [topic],
            [0],
            lambda t, value, k, p, h: read.append(value),
            timeout_s=60,
            stuck=renew,
            stuck_after_s=1.0,
        )
        assert len(renewed) == 1
        assert read == [b"before"] and count == 1  # the open record was aborted, never read
    finally:
        for made in renewed:
            await made.stop()
        with contextlib.suppress(Exception):  # fenced by the renewal
            await stale.stop()


async def test_a_rebuild_fences_the_previous_owner_whose_transaction_outlives_its_timeout(
    kafka: Cluster, topic: str, producer: AIOKafkaProducer
) -> None:
    """Issue 26 item 5, ADR 039: the transaction held open past its timeout is another
    instance's (the partition's previous owner), so renewing the rebuild's own transactional id
    does not end it. A transaction timeout of 15 minutes stands in for the broker that does not
    abort it. The rebuild asks the leader which producer holds the partition and the coordinator
    which transactional id that is, fences it, and reads on without the open record; the holder's
    commit is refused. Before ADR 039 this replay waited out its bound (TimeoutError)."""
    await committed_records(producer, topic, [b"before"])
    holder = AIOKafkaProducer(
        **kafka.admin.kwargs(),
        transactional_id=f"{topic}-previous-owner",
        transaction_timeout_ms=900_000,
    )
    own = KafkaProducer(kafka.admin, f"{topic}-own")
    await holder.start()
    await own.start()
    try:
        await holder.begin_transaction()
        await holder.send_and_wait(topic, value=b"left open", partition=0)
        read: list[bytes] = []
        count = await replay(
            kafka.admin,
            [topic],
            [0],
            lambda t, value, k, p, h: read.append(value),
            timeout_s=45,
            stuck=own.renew,
            stuck_after_s=1.0,
        )
        assert read == [b"before"] and count == 1  # the open record was aborted, never read
        with pytest.raises(KafkaError):  # fenced: a newer epoch of its id
            await holder.commit_transaction()
    finally:
        await own.stop()
        with contextlib.suppress(Exception):
            await holder.stop()
