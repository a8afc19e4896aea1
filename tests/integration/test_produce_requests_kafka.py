"""Issue 28's cost counter for the produce path: a transaction of a full poll batch's records
reaches a one-broker cluster in one produce request, not one per record or per 16 KiB. The
requests are counted on aiokafka's own client as they are sent (a count, not a time: it does
not depend on the machine or its load)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from support.kafka import Cluster

from holdem.core.wire.topics import Topics
from holdem.runtime.kafka import KafkaProducer
from holdem.runtime.outbox import Record

pytestmark = [pytest.mark.kafka]

BATCH = 500  # records of one poll batch, the loop's largest (holdem.runtime.loop)


def counted(producer: KafkaProducer) -> Counter[str]:
    """The requests ``producer``'s client sends from now on, by request type."""
    client = producer._producer.client  # type: ignore[union-attr]
    sent: Counter[str] = Counter()
    send = client.send

    async def counting(node_id: int, request: Any, *args: Any, **kwargs: Any) -> Any:
        sent[type(request).__name__] += 1
        return await send(node_id, request, *args, **kwargs)

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
