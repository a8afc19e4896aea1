"""Read topics' partitions from the beginning up to their end offsets (committed data only)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Mapping, Sequence

from aiokafka import AIOKafkaConsumer, TopicPartition

from holdem.client.connection import KafkaConnection, as_connection
from holdem.runtime.outbox import TYPE_HEADER

FETCH_BYTES = 4 * 1024 * 1024  # per partition and fetch: a replay reads long runs of records
# Records folded between two yields to the event loop: the fold is synchronous, and the
# consumer group's heartbeats (6 s session) run on the same loop while a service replays.
YIELD_EVERY = 500


Apply = Callable[[str, bytes, bytes | None, int], None]
Wanted = Callable[[str, bytes | None], bool]  # (topic, the record's type header) -> parse it?


async def replay(
    connection: KafkaConnection | str,
    topics: Collection[str],
    partitions: Collection[int],
    apply: Apply,
    *,
    starts: Mapping[TopicPartition, int] | None = None,
    timeout_s: float = 120.0,
    wanted: Wanted | None = None,
) -> int:
    """Feed every committed record of ``topics`` × ``partitions`` to
    ``apply(topic, value, key, partition)``,
    in partition order, from ``starts`` (a snapshot's offsets; default: the beginning), stopping
    at the end offsets taken when the replay starts. A record whose type header ``wanted``
    refuses is skipped unparsed. Returns the number of records read (applied or skipped).
    ``TimeoutError`` once ``timeout_s`` pass without the replay getting any further: a long
    log is read to its end, a stalled read is not waited for."""
    assignment = [TopicPartition(t, p) for t in topics for p in partitions]
    if not assignment:
        return 0
    consumer = AIOKafkaConsumer(
        **as_connection(connection).kwargs(),
        group_id=None,
        enable_auto_commit=False,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=FETCH_BYTES,
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
        read = 0
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"replay made no progress in {timeout_s:.0f}s towards the end offsets of "
                    f"{sorted(pending)}"
                )
            batches = await consumer.getmany(*pending, timeout_ms=200, max_records=YIELD_EVERY)
            for tp, records in batches.items():
                for record in records:
                    if record.offset >= ends[tp] or record.value is None:
                        continue
                    read += 1
                    if wanted is None or wanted(tp.topic, type_header(record.headers)):
                        apply(tp.topic, record.value, record.key, tp.partition)
            if batches:
                deadline = time.monotonic() + timeout_s
            for tp in list(pending):
                if await consumer.position(tp) >= ends[tp]:
                    pending.discard(tp)
            await asyncio.sleep(0)
        return read
    finally:
        await consumer.stop()


def type_header(headers: Sequence[tuple[str, bytes]] | None) -> bytes | None:
    """A record's ``type`` header (the message type its publisher named), if it has one."""
    for key, value in headers or ():
        if key == TYPE_HEADER:
            return bytes(value)
    return None
