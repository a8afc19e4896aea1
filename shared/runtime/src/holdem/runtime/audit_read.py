"""Read a whole topic, every partition from the beginning to its end (committed data only)."""

from __future__ import annotations

import time

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition

READ_TIMEOUT_S = 120.0


async def read_topic(
    bootstrap: str, topic: str, timeout_s: float = READ_TIMEOUT_S
) -> list[ConsumerRecord[bytes, bytes]]:
    """Every committed record of ``topic`` up to the end offsets taken when the read starts."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, isolation_level="read_committed", enable_auto_commit=False
    )
    await consumer.start()
    try:
        await consumer.topics()  # fetches the cluster's metadata, partitions included
        partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            raise LookupError(f"topic {topic} does not exist")
        assignment = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(assignment)
        ends = await consumer.end_offsets(assignment)
        await consumer.seek_to_beginning(*assignment)
        records: list[ConsumerRecord[bytes, bytes]] = []
        pending = {tp for tp in assignment if ends[tp] > 0}
        deadline = time.monotonic() + timeout_s
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}: end offsets not reached in {timeout_s:.0f}s")
            batches = await consumer.getmany(*pending, timeout_ms=500)
            for tp, batch in batches.items():
                records.extend(r for r in batch if r.offset < ends[tp])
            for tp in list(pending):
                if await consumer.position(tp) >= ends[tp]:
                    pending.discard(tp)
        return records
    finally:
        await consumer.stop()
