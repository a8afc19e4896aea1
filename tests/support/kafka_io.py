"""Plain aiokafka helpers for tests: produce a record, read a whole topic (committed only)."""

from __future__ import annotations

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition


async def produce(bootstrap: str, topic: str, key: str, value: bytes) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        await producer.send_and_wait(topic, value=value, key=key.encode())
    finally:
        await producer.stop()


async def partitions_of(bootstrap: str, topic: str) -> set[int]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
    await producer.start()
    try:
        return set(await producer.partitions_for(topic))
    finally:
        await producer.stop()


async def read_all(bootstrap: str, topic: str) -> list[ConsumerRecord[bytes, bytes]]:
    """Every committed record of ``topic`` up to its current end, partition by partition."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, isolation_level="read_committed", enable_auto_commit=False
    )
    await consumer.start()
    try:
        partitions = await partitions_of(bootstrap, topic)
        assignment = [TopicPartition(topic, p) for p in sorted(partitions)]
        if not assignment:
            raise LookupError(f"topic {topic} does not exist")
        consumer.assign(assignment)
        ends = await consumer.end_offsets(assignment)
        await consumer.seek_to_beginning(*assignment)
        records: list[ConsumerRecord[bytes, bytes]] = []
        pending = {tp for tp in assignment if ends[tp] > 0}
        while pending:
            batches = await consumer.getmany(*pending, timeout_ms=500)
            for tp, batch in batches.items():
                records.extend(r for r in batch if r.offset < ends[tp])
            for tp in list(pending):
                if await consumer.position(tp) >= ends[tp]:
                    pending.discard(tp)
        return records
    finally:
        await consumer.stop()
