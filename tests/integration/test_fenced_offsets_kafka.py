"""KIP-447 on the real broker: a transaction's offsets sent as a group member that the coordinator
no longer knows are refused and the transaction aborts; sent the old way (v0), they are not."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.structs import OffsetAndMetadata
from support.kafka import Cluster

from holdem.runtime.kafka import transactional_outbox
from holdem.runtime.kafka_internals import Member, membership
from holdem.runtime.outbox import FatalError
from holdem.runtime.topic_setup import ensure_topics

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(120)]


async def joined(consumer: AIOKafkaConsumer) -> Member:
    for _ in range(100):
        await consumer.getmany(timeout_ms=200)
        if consumer.assignment():
            now = membership(consumer)
            assert now.generation is not None and now.member_id is not None
            return Member(now.generation, now.member_id)
    raise AssertionError("the consumer never got its assignment")


async def committed(consumer: AIOKafkaConsumer, tp: TopicPartition, expected: int) -> int | None:
    """The group's offset once it shows ``expected`` (a transaction's offsets land on its
    commit marker, a moment after the commit returns), else what it is after 10 s."""
    found = None
    for _ in range(50):
        found = await consumer.committed(tp)
        if found == expected:
            break
        await asyncio.sleep(0.2)
    return found


async def test_offsets_from_a_member_the_group_no_longer_knows_abort_the_transaction(
    kafka: Cluster,
) -> None:
    name = f"fenced-{uuid.uuid4().hex[:8]}"
    await ensure_topics(kafka.admin, [name], partitions=1, wait=60)
    tp = TopicPartition(name, 0)
    consumer = AIOKafkaConsumer(
        name, **kafka.admin.kwargs(), group_id=name, enable_auto_commit=False
    )
    outbox = transactional_outbox(kafka.admin, f"{name}-txn", retries=1)
    await consumer.start()
    try:
        await outbox.start()  # one that fails leaves no consumer open (issue 26 item 6)
        member = await joined(consumer)
        await outbox.commit({tp: OffsetAndMetadata(1, "")}, name, member)
        assert await committed(consumer, tp, 1) == 1

        for stale in (
            Member(member.generation, "a-member-long-gone"),
            Member(member.generation - 1, member.member_id),
        ):
            with pytest.raises(FatalError, match="no longer the group's member"):
                await outbox.commit({tp: OffsetAndMetadata(5, "")}, name, stale)
            await outbox.stop()  # a refused member's process ends; its successor starts anew
            outbox = transactional_outbox(kafka.admin, f"{name}-txn", retries=1)
            await outbox.start()
        assert await committed(consumer, tp, 5) == 1  # neither refused commit moved the group

        # The defect this closes: without the member (TxnOffsetCommit v0) the coordinator takes
        # the offsets from anyone who names the group.
        await outbox.commit({tp: OffsetAndMetadata(7, "")}, name, None)
        assert await committed(consumer, tp, 7) == 7
    finally:
        await outbox.stop()
        await consumer.stop()
