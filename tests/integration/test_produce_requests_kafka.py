"""Issue 28's cost counter for the produce path: a transaction of a full poll batch's records
reaches a one-broker cluster in one produce request, not one per record or per 16 KiB, and its
offsets are sent only once those requests are answered (ADR 036). The requests are counted on
aiokafka's own client as they are sent (a count, not a time: it does not depend on the machine
or its load)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from aiokafka import TopicPartition
from support.kafka import Cluster

from holdem.core.wire.topics import Topics
from holdem.runtime.kafka import KafkaProducer
from holdem.runtime.outbox import Record

pytestmark = [pytest.mark.kafka]

BATCH = 500  # records of one poll batch, the loop's largest (holdem.runtime.loop)


def counted(producer: KafkaProducer) -> Counter[str]:
    """The requests ``producer``'s client sends from now on, by request type; under
    "produce requests unanswered at AddOffsetsToTxnRequest", how many produce requests were
    still waiting for their answer each time the transaction's offsets were sent."""
    client = producer._producer.client  # type: ignore[union-attr]
    sent: Counter[str] = Counter()
    send = client.send
    unanswered = 0

    async def counting(node_id: int, request: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal unanswered
        name = type(request).__name__
        sent[name] += 1
        if name == "AddOffsetsToTxnRequest":
            sent["produce requests unanswered at AddOffsetsToTxnRequest"] += unanswered
        if name != "ProduceRequest":
            return await send(node_id, request, *args, **kwargs)
        unanswered += 1
        try:
            return await send(node_id, request, *args, **kwargs)
        finally:
            unanswered -= 1

    client.send = counting
    return sent


def records(topics: Topics, batch: int) -> list[Record]:
    """A batch's events on two topics and all their partitions, each about a round's size."""
    body = b'{"type":"round.dealt","padding":"' + b"x" * 700 + b'"}'
    return [
        Record(topics.rounds if n % 2 else topics.wallet, f"p{n:03d}", body, "round.dealt")
        for n in range(batch)
    ]


async def test_a_transaction_of_a_full_batch_is_one_produce_request(
    kafka: Cluster, topics: Topics
) -> None:
    producer = KafkaProducer(kafka.admin, f"{topics.prefix}.produce-requests")
    await producer.start()
    try:
        # The first transaction also fetches the topics' metadata (a send waits for it there).
        await producer.transact(records(topics, BATCH), [], {}, None, None)
        sent = counted(producer)
        per_transaction = []
        for _ in range(3):
            await producer.transact(records(topics, BATCH), [], {}, None, None)
            per_transaction.append(sent["ProduceRequest"])
            sent.clear()
    finally:
        await producer.stop()
    assert per_transaction == [1, 1, 1]  # ~360 KB over 6 partitions; 5 at 16 KiB batches


async def test_a_batch_s_offsets_are_sent_once_its_records_are_acknowledged(
    kafka: Cluster, topics: Topics
) -> None:
    """ADR 036: AddOffsetsToTxn never overlaps the transaction's produce requests (KIP-890's
    verification answered such produces NOT_ENOUGH_REPLICAS, and they were sent again)."""
    producer = KafkaProducer(kafka.admin, f"{topics.prefix}.produce-acks")
    group = f"{topics.prefix}.produce-acks"
    offsets = {TopicPartition(topics.commands, 0): 1}
    await producer.start()
    try:
        await producer.transact(records(topics, BATCH), [], offsets, group, None)
        sent = counted(producer)
        for n in range(3):
            offsets = {TopicPartition(topics.commands, 0): 2 + n}
            await producer.transact(records(topics, BATCH), [], offsets, group, None)
    finally:
        await producer.stop()
    assert sent["AddOffsetsToTxnRequest"] == 3
    assert sent["produce requests unanswered at AddOffsetsToTxnRequest"] == 0
    assert sent["ProduceRequest"] == 3  # none sent again
