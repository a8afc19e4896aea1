"""Read topics' partitions from the beginning up to their end offsets (committed data only)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Mapping

from aiokafka import AIOKafkaConsumer, TopicPartition

from holdem.client.connection import KafkaConnection, as_connection


async def replay(
    connection: KafkaConnection | str,
    topics: Collection[str],
    partitions: Collection[int],
    apply: Callable[[str, bytes, bytes | None, int], None],
    *,
    starts: Mapping[TopicPartition, int] | None = None,
    timeout_s: float = 120.0,
) -> int:
    """Feed every committed record of ``topics`` × ``partitions`` to
    ``apply(topic, value, key, partition)``,
    in partition order, from ``starts`` (a snapshot's offsets; default: the beginning), stopping
    at the end offsets taken when the replay starts. Returns the number of records applied."""
    assignment = [TopicPartition(t, p) for t in topics for p in partitions]
    if not assignment:
        return 0
    consumer = AIOKafkaConsumer(
        **as_connection(connection).kwargs(),
        group_id=None,
        enable_auto_commit=False,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        consumer.assign(assignment)
        ends = await consumer.end_offsets(assignment)  # read_committed: the last stable offsets
        starts = starts or {}
        pending = {tp for tp in assignment if ends[tp] > starts.get(tp, 0)}
        if not pending:
            return 0
        # Explicit seeks (see audit_read): a position reset still in flight from assign() must
        # not decide where a replay starts.
        for tp, offset in (await consumer.beginning_offsets(list(pending))).items():
            consumer.seek(tp, max(offset, starts.get(tp, 0)))
        deadline = time.monotonic() + timeout_s
        applied = 0
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"replay did not reach the end offsets of {sorted(pending)}")
            batches = await consumer.getmany(*pending, timeout_ms=200)
            for tp, records in batches.items():
                for record in records:
                    if record.offset < ends[tp] and record.value is not None:
                        apply(tp.topic, record.value, record.key, tp.partition)
                        applied += 1
            for tp in list(pending):
                if await consumer.position(tp) >= ends[tp]:
                    pending.discard(tp)
            await asyncio.sleep(0)
        return applied
    finally:
        await consumer.stop()
