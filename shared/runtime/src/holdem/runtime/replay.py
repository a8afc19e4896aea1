"""Read topics' partitions from the beginning up to their end offsets (committed data only),
once every transaction open when the read began has ended."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping

import structlog
from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.errors import KafkaError

from holdem.core.wire.connection import KafkaConnection, as_connection, start_or_close
from holdem.runtime.kafka_internals import high_watermarks
from holdem.runtime.open_transactions import release
from holdem.runtime.transport import Apply, Wanted, type_header

FETCH_BYTES = 4 * 1024 * 1024  # per partition and fetch: a replay reads long runs of records
# Records folded between two yields to the event loop: the fold is synchronous, and the
# consumer group's heartbeats (6 s session) run on the same loop while a service replays.
YIELD_EVERY = 500
WANTS_KEPT = 1_024  # (topic, type header) pairs whose ``wanted`` answer a replay remembers
SETTLE_POLL_S = 0.05  # how often a replay asks whether the transactions open at its start ended
# Past the producers' transaction timeout (15 s, holdem.runtime.kafka), a transaction still open
# is one the broker failed to abort (seen after a disk-full halt, ADR 033): ``stuck`` is called.
STUCK_AFTER_S = 20.0
log = structlog.get_logger(__name__)
Stuck = Callable[[], Awaitable[None]]
Unstick = Callable[[list[TopicPartition]], Awaitable[None]]


__all__ = ["Apply", "Merge", "Wanted", "replay", "type_header"]


async def replay(
    connection: KafkaConnection | str,
    topics: Collection[str],
    partitions: Collection[int],
    apply: Apply,
    *,
    starts: Mapping[TopicPartition, int] | None = None,
    timeout_s: float = 120.0,
    wanted: Wanted | None = None,
    stuck: Stuck | None = None,
    stuck_after_s: float = STUCK_AFTER_S,
) -> int:
    """Feed every committed record of ``topics`` × ``partitions`` to
    ``apply(topic, value, key, partition, headers)``, from ``starts`` (a snapshot's offsets;
    default: the beginning) to the end offsets taken when the replay starts; each partition
    number's topics merged in the order their records were written (``Merge``). A record
    whose type header ``wanted`` refuses is skipped unparsed. Returns the number of records
    read (applied or skipped). ``TimeoutError`` once ``timeout_s`` pass without the replay
    getting any further: a long log is read to its end, a stalled read is not waited for.

    The end offsets are taken once no transaction open when the replay starts is still open
    (``settled_ends``): a state rebuilt without the records of one would lack them for good, since
    they were written before it and only new records follow. ``stuck``, if given, is awaited
    when they are still open after ``stuck_after_s`` (the rebuild renews its transactional id:
    the broker then aborts what that id left open, ADR 034), and the transactional ids of the
    producers still holding them, its service's previous owners of the partitions, are fenced
    (``open_transactions.release``, ADR 039); both again every ``stuck_after_s``."""
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
    await start_or_close(consumer)
    try:
        written = await high_watermarks(consumer, assignment)  # before assign: no fetch yet
        consumer.assign(assignment)
        unstick: Unstick | None = None
        if stuck is not None:
            renew = stuck

            async def unstick(open_: list[TopicPartition]) -> None:
                await renew()
                try:
                    await release(connection, consumer, {tp: written[tp] for tp in open_})
                except (KafkaError, LookupError, TimeoutError, OSError) as error:
                    log.error("could not end the open transactions", error=repr(error))

        ends = await settled_ends(consumer, written, timeout_s, unstick, stuck_after_s)
        starts = starts or {}
        pending = {tp for tp in assignment if ends[tp] > starts.get(tp, 0)}
        if not pending:
            return 0
        # Explicit seeks (see audit_read): a position reset still in flight from assign() must
        # not decide where a replay starts.
        for tp, offset in (await consumer.beginning_offsets(list(pending))).items():
            consumer.seek(tp, max(offset, starts.get(tp, 0)))
        merge = Merge(topics, partitions, pending, wanted, apply)
        deadline = time.monotonic() + timeout_s
        while pending or merge.buffered():
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"replay made no progress in {timeout_s:.0f}s towards the end offsets of "
                    f"{sorted(pending)}"
                )
            hungry = merge.hungry()
            batches = (
                await consumer.getmany(*hungry, timeout_ms=200, max_records=YIELD_EVERY)
                if hungry
                else {}
            )
            for tp, records in batches.items():
                merge.add(tp, (r for r in records if r.offset < ends[tp]))
            for tp in list(pending):
                if await consumer.position(tp) >= ends[tp]:
                    pending.discard(tp)
            if merge.apply(YIELD_EVERY) or batches:
                deadline = time.monotonic() + timeout_s
            await asyncio.sleep(0)
        return merge.read
    finally:
        await consumer.stop()


async def settled_ends(
    consumer: AIOKafkaConsumer,
    written: Mapping[TopicPartition, int],
    timeout_s: float,
    stuck: Unstick | None = None,
    stuck_after_s: float = STUCK_AFTER_S,
) -> dict[TopicPartition, int]:
    """The last stable offsets of the partitions (``consumer`` reads committed data) once each
    has passed ``written``, its high watermark when the replay began: every transaction with a
    record written by then has committed or aborted. An instance rebuilding its state needs
    that. Its own outputs of a batch committed just before may still be behind another
    producer's open transaction (a service frozen mid-transaction holds the last stable offset
    back until it is thawed and fenced, or its transaction times out); so may a frozen
    predecessor's last batch (the zombie), whose transaction can still commit. Read to the last
    stable offset alone, the state would lack them, and the instance would take its own dealt
    round for one never dealt. ``TimeoutError`` after ``timeout_s`` (past the producers'
    transaction timeout, after which the broker aborts what is still open). ``stuck(open)`` is
    awaited every ``stuck_after_s`` while some are still open."""
    started = time.monotonic()
    deadline = started + timeout_s
    unstick_at = started + stuck_after_s
    tps = list(written)
    while True:
        stable: dict[TopicPartition, int] = await consumer.end_offsets(tps)
        open_ = sorted(tp for tp in tps if stable[tp] < written[tp])
        if not open_:
            return stable
        if stuck is not None and time.monotonic() > unstick_at:
            log.warning(
                "transactions open past the transaction timeout: fencing their transactional ids",
                partitions=[f"{tp.topic}-{tp.partition}" for tp in open_],
                waited_s=round(time.monotonic() - started, 1),
            )
            await stuck(open_)
            unstick_at = time.monotonic() + stuck_after_s
        if time.monotonic() > deadline:
            raise TimeoutError(
                f"transactions still open after {timeout_s:.0f}s on {open_}: "
                f"{[(stable[tp], written[tp]) for tp in open_]}"
            )
        await asyncio.sleep(SETTLE_POLL_S)


class Merge:
    """The records of a partition number's topics, applied in the order they were written (their
    timestamps; ties in the order the topics are given), not one topic ahead of another: the
    services' folds depend on it (a ledger folded ahead of its rounds kept their evidence)."""

    def __init__(
        self,
        topics: Collection[str],
        partitions: Collection[int],
        pending: set[TopicPartition],
        wanted: Wanted | None,
        apply: Apply,
    ) -> None:
        self.rank = {topic: n for n, topic in enumerate(topics)}
        self.groups = [[TopicPartition(t, p) for t in topics] for p in partitions]
        self.buffers: dict[TopicPartition, deque[ConsumerRecord[bytes, bytes]]] = {
            tp: deque() for group in self.groups for tp in group
        }
        self.pending = pending  # still being read: an empty buffer of one of them blocks
        self.wanted = wanted
        self._apply = apply
        self.read = 0
        # ``wanted``'s answers by (topic, type header): a log holds a few dozen types, and
        # asking again for every record cost a fifth of a bare read (issue 28 item 5).
        self._wants: dict[tuple[str, bytes | None], bool] = {}

    def add(self, tp: TopicPartition, records: Iterable[ConsumerRecord[bytes, bytes]]) -> None:
        self.buffers[tp].extend(records)

    def buffered(self) -> bool:
        return any(self.buffers.values())

    def hungry(self) -> list[TopicPartition]:
        """The partitions still being read whose buffer has room."""
        return [tp for tp in self.pending if len(self.buffers[tp]) < YIELD_EVERY]

    def apply(self, budget: int) -> int:
        """Apply up to ``budget`` records that can be put in order; how many were applied."""
        done = 0
        for group in self.groups:
            while done < budget:
                if any(tp in self.pending and not self.buffers[tp] for tp in group):
                    break  # the next record of that topic could be older than those buffered
                ready = [tp for tp in group if self.buffers[tp]]
                if not ready:
                    break
                tp = min(ready, key=lambda t: (self.buffers[t][0].timestamp, self.rank[t.topic]))
                record = self.buffers[tp].popleft()
                done += 1
                if record.value is None:
                    continue
                self.read += 1
                if self.wanted is None or self._wanted(tp.topic, type_header(record.headers)):
                    self._apply(tp.topic, record.value, record.key, tp.partition, record.headers)
        return done

    def _wanted(self, topic: str, kind: bytes | None) -> bool:
        """``wanted(topic, kind)``, remembered for the first WANTS_KEPT pairs."""
        found = self._wants.get((topic, kind))
        if found is None:
            found = self.wanted is None or self.wanted(topic, kind)
            if len(self._wants) < WANTS_KEPT:  # a flood of made-up types is asked each time
                self._wants[(topic, kind)] = found
        return found
