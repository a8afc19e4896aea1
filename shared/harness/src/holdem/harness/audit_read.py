"""Read a whole topic, every partition from the beginning to its end (committed data only,
unless asked for everything)."""

from __future__ import annotations

import time

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition

from holdem.core.wire.connection import KafkaConnection, as_connection, start_or_close

READ_TIMEOUT_S = 120.0


async def read_topic(
    connection: KafkaConnection | str,
    topic: str,
    timeout_s: float = READ_TIMEOUT_S,
    *,
    committed: bool = True,
) -> list[ConsumerRecord[bytes, bytes]]:
    """Every committed record of ``topic`` up to the end offsets taken when the read starts.
    The audit reads the vault too, so it runs as ``admin``. ``committed=False``: every record
    in the log, those of aborted and open transactions too (what a read_committed reader must
    never see; the disk-full test counts them)."""
    connection = as_connection(connection)
    consumer = AIOKafkaConsumer(
        **connection.kwargs(),
        isolation_level="read_committed" if committed else "read_uncommitted",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await start_or_close(consumer)
    try:
        partitions = await partitions_of(connection, topic)
        if not partitions:
            raise LookupError(f"topic {topic} does not exist")
        assignment = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(assignment)
        ends = await consumer.end_offsets(assignment)
        # An explicit seek, not seek_to_beginning: a reset to "latest" still in flight from
        # assign() would win over seek_to_beginning's reset (aiokafka) and read nothing.
        for tp, offset in (await consumer.beginning_offsets(assignment)).items():
            consumer.seek(tp, offset)
        return await _drain(consumer, ends, time.monotonic() + timeout_s)
    finally:
        await consumer.stop()


async def _drain(
    consumer: AIOKafkaConsumer, ends: dict[TopicPartition, int], deadline: float
) -> list[ConsumerRecord[bytes, bytes]]:
    """Fetch until every partition's position reaches its end offset."""
    records: list[ConsumerRecord[bytes, bytes]] = []
    pending = {tp for tp, end in ends.items() if end > 0}
    while pending:
        if time.monotonic() > deadline:
            raise TimeoutError(f"end offsets of {sorted(pending)} not reached in time")
        batches = await consumer.getmany(*pending, timeout_ms=500)
        for tp, batch in batches.items():
            records.extend(r for r in batch if r.offset < ends[tp])
        for tp in list(pending):
            if await consumer.position(tp) >= ends[tp]:
                pending.discard(tp)
    return records


async def partitions_of(connection: KafkaConnection | str, topic: str) -> set[int]:
    # A producer fetches one topic's metadata on demand; a consumer's cache holds only its own.
    producer = AIOKafkaProducer(**as_connection(connection).kwargs())
    await producer.start()
    try:
        return set(await producer.partitions_for(topic))
    finally:
        await producer.stop()
