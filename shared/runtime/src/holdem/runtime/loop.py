"""The service's consume-transform-produce loop: one transaction per poll batch.

Each poll batch is decided record by record against the state, then every event it produced and
the batch's consumer offsets are committed in one transaction (on Kafka,
``send_offsets_to_transaction``): effects and progress commit or abort together. No framework
work per record. The loop runs over ``holdem.runtime.transport``: Kafka in a service
(``holdem.runtime.kafka``), an in-memory log in the tests (``holdem.runtime.testing``), with the
same batches and transactions. A record is decided only once the state of its partition is
rebuilt for the current assignment; a replay that fails, or a producer that cannot commit, ends
the process (status 70) for its supervisor to restart."""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import UTC, datetime
from typing import Any

import structlog

from holdem.core.wire.topics import snapshot_topic
from holdem.runtime.book import REPLAY_TIMEOUT_S, BookTail, Fatal, stop_reading
from holdem.runtime.outbox import FatalError, TransactionalOutbox
from holdem.runtime.processor import Processor
from holdem.runtime.settings import RuntimeSettings
from holdem.runtime.transport import (
    Batch,
    GroupConsumer,
    GroupSettings,
    Member,
    Membership,
    Offsets,
    TopicPartition,
    Transport,
    type_header,
)

log = structlog.get_logger(__name__)
MAX_BATCH = 500  # records per poll: one transaction each
SESSION_TIMEOUT_MS = 6_000  # a killed instance's partitions move after this (the broker's minimum)
HEARTBEAT_MS = 1_000
# aiokafka's default: a member that polls nothing for this long leaves its group. A rebuild is
# the loop's work, not idleness, and counts as polling (``_rebuilding``); the replay's own
# progress timeout is what stops a rebuild that gets nowhere.
MAX_POLL_INTERVAL_MS = 300_000
CAUGHT_UP_TIMEOUT_S = 5.0  # a tick's ask for the log's ends: longer, and the broker is stalled
# Liveness (issue 26): a member serving its partitions with records waiting on them, and the
# broker answering, that decides no batch for this long is stalled (its committed offsets never
# answered, say): it exits for its supervisor rather than stay up doing nothing. Above any
# batch's retries and a rebalance's wait for a member's session; within the 90 s goal.
STALL_S = 45.0


class StalledError(RuntimeError):
    """Records wait on assigned partitions and none has been decided for ``STALL_S``."""


class SplitAssignmentError(RuntimeError):
    """An assignment that gives this instance a partition of one input topic and not the same
    partition of the others: its state would miss the other owner's records."""


class Rebuild:
    """Have the state of exactly the assigned partitions rebuilt before any of their records is
    decided; a revoke waits for the batch in flight to commit, then forgets the state. The
    rebuild itself runs in the loop's task, not here: aiokafka sends no heartbeat while this
    callback runs, and a rebuild longer than the session timeout got the member evicted."""

    def __init__(self, loop: ServiceLoop) -> None:
        self.loop = loop

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        processor = self.loop.processor
        async with processor.lock:  # the batch in flight commits first
            self.loop.ready = False
            self.loop.pending = None
            processor.metrics.lag.clear()
            processor.reset()

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        # aiokafka only logs what a listener raises and goes on with the assignment: a state
        # that could not be rebuilt must end the process instead of being decided against.
        try:
            partitions = sorted({tp.partition for tp in assigned})
            inputs = self.loop.input_topics()
            whole = {TopicPartition(t, p) for t in inputs for p in partitions}
            if set(assigned) != whole:
                raise SplitAssignmentError(
                    f"assigned {sorted(assigned)}, not every input topic of partitions {partitions}"
                )
            self.loop.generation = self.loop.current_generation()
            self.loop.pending = partitions  # rebuilt by the loop before its next batch
        except Exception as error:
            self.loop.fatal(error)


class ServiceLoop:
    """One service instance's consumer, outbox and processor."""

    def __init__(
        self,
        processor: Processor[Any],
        outbox: TransactionalOutbox,
        settings: RuntimeSettings,
        fatal: Fatal,
        transport: Transport,
    ) -> None:
        self.processor = processor
        self.outbox = outbox
        self.settings = settings
        self.fatal = fatal
        self.transport = transport
        scope = f"{settings.topic_prefix}." if settings.topic_prefix else ""
        self.group_id = f"{scope}holdem-{processor.spec.name}"
        self.client_id = f"{self.group_id}-{settings.instance_id}"
        self.ready = False
        # When it last resumed making progress (rebuilt, or reached the broker again after it
        # could not): the ticks' timers count from it at the earliest (Context.resumed_at).
        self.resumed_at: datetime | None = None
        self._unreachable = False
        self.stall_s = STALL_S
        self._progress_at = time.monotonic()  # last decided batch, rebuild, or nothing waiting
        self.generation: int | None = None  # the group generation the state was rebuilt for
        self.pending: list[int] | None = None  # assigned, not rebuilt yet
        self.batches = 0
        self.consumer: GroupConsumer | None = None
        self._task: asyncio.Task[None] | None = None
        self.snapshot_topic = snapshot_topic(settings.topics, processor.spec.name)
        self._snapshot_due = 0.0
        self.book = BookTail(processor, settings, fatal, transport)

    def input_topics(self) -> list[str]:
        return [self.processor.topic_of(role) for role in self.processor.spec.inputs]

    async def start(self) -> None:
        inputs = self.input_topics()
        self.consumer = self.transport.consumer(
            GroupSettings(
                group_id=self.group_id,
                client_id=self.client_id,
                max_records=MAX_BATCH,
                session_timeout_ms=SESSION_TIMEOUT_MS,
                heartbeat_ms=HEARTBEAT_MS,
                max_poll_interval_ms=MAX_POLL_INTERVAL_MS,
            )
        )
        self.consumer.subscribe(inputs, listener=Rebuild(self))
        await self.book.start()
        await self.consumer.start()
        self._task = asyncio.create_task(self._run(), name=f"{self.group_id}-loop")

    async def stop(self) -> None:
        # A dynamic member leaves the group on stop: a quick hand-over.
        await stop_reading(self._task, self.consumer)
        await self.book.stop()

    async def _rebuild_pending(self) -> None:
        """The caller holds the processor's lock."""
        partitions, self.pending = self.pending, None
        if partitions is not None:
            await self.rebuild(partitions)

    async def rebuild(self, partitions: list[int]) -> None:
        """Each assigned partition from its latest snapshot (if any) plus the log's tail (the
        caller holds the processor's lock)."""
        with self._rebuilding():
            await self._rebuild(partitions)

    def _rebuilding(self) -> contextlib.AbstractContextManager[Any]:
        """The member is busy, not idle, while it rebuilds: without this aiokafka leaves the
        group once a replay outlasts max_poll_interval (5 min: a cold start on a million
        rounds), the rejoin assigns the partitions again, and the rebuild starts over for ever
        (seen in the restart bench). Its poll clock is the one a fetch holds still."""
        return self.consumer.busy() if self.consumer is not None else contextlib.nullcontext()

    async def _rebuild(self, partitions: list[int]) -> None:
        processor = self.processor
        topics = [processor.topic_of(role) for role in processor.spec.state_roles]
        inputs = {processor.topic_of(role) for role in processor.spec.inputs}

        def wanted(topic: str, kind: bytes | None) -> bool:
            # What it skips unparsed when it consumes a topic, it skips when it replays it
            # too; a topic only it writes (its ledger, its vault) is folded whole.
            return topic not in inputs or processor.wants(topic, kind)

        started = time.perf_counter()
        processor.reset()
        starts, loaded = await self._load_snapshots(partitions)
        count = await self.transport.replay(
            topics,
            partitions,
            processor.fold,
            starts=starts,
            timeout_s=REPLAY_TIMEOUT_S,
            wanted=wanted,
            stuck=self.outbox.renew,
        )
        # The whole book again, to its end: the commands of the partitions just assigned are
        # decided against every table event their previous owner committed.
        count += await self.book.replay()
        seconds = time.perf_counter() - started
        self.ready = True
        self.resumed_at = datetime.now(UTC)
        self._progress_at = time.monotonic()
        self._snapshot_due = time.monotonic() + self.settings.snapshot_interval_s
        name = processor.spec.name
        processor.metrics.replay_duration.labels(name).observe(seconds)
        processor.metrics.replay_events.labels(name).inc(count)
        log.info(
            "replayed",
            partitions=partitions,
            snapshots=loaded,
            events=count,
            seconds=round(seconds, 3),
        )

    async def _load_snapshots(
        self, partitions: list[int]
    ) -> tuple[dict[TopicPartition, int], list[int]]:
        """States from the latest snapshots; the offsets their replays start from."""
        codec = self.processor.spec.snapshot
        if codec is None or self.settings.snapshot_interval_s <= 0:
            return {}, []
        name = self.processor.spec.name
        found = await self.transport.latest_snapshots(self.snapshot_topic, partitions)
        starts: dict[TopicPartition, int] = {}
        for partition, raw in sorted(found.items()):
            try:
                snapshot = self.processor.store.load(raw, name, partition)
            except ValueError as error:  # the log is still whole: rebuild from its beginning
                log.error("snapshot unusable, full replay", partition=partition, error=repr(error))
                self.processor.metrics.snapshot_failures.labels(name).inc()
                continue
            starts.update(snapshot.starts())
        return starts, sorted({tp.partition for tp in starts})

    async def _snapshot_if_due(self, batch_offsets: Offsets) -> None:
        """Every snapshot_interval_s, each assigned partition's state goes into this batch's
        transaction with the offsets it covers."""
        codec, consumer = self.processor.spec.snapshot, self.consumer
        interval = self.settings.snapshot_interval_s
        if (
            codec is None
            or consumer is None
            or interval <= 0
            or time.monotonic() < self._snapshot_due
        ):
            return
        self._snapshot_due = time.monotonic() + interval
        processor = self.processor
        inputs = {processor.topic_of(role) for role in processor.spec.inputs}
        state_topics = [processor.topic_of(role) for role in processor.spec.state_roles]
        assigned = sorted({tp.partition for tp in consumer.assignment()})
        only_state = [
            TopicPartition(t, p) for t in state_topics if t not in inputs for p in assigned
        ]
        stable = await consumer.end_offsets(only_state) if only_state else {}
        records = []
        for partition in assigned:
            offsets = {}
            for topic in state_topics:
                tp = TopicPartition(topic, partition)
                if topic in inputs:
                    offsets[topic] = batch_offsets.get(tp) or await consumer.position(tp)
                else:
                    offsets[topic] = stable[tp]
            snapshot = processor.store.dump(processor.spec.name, partition, offsets)
            records += [
                (self.snapshot_topic, partition, key, value) for key, value in snapshot.to_records()
            ]
        self.outbox.add_snapshots(records)
        processor.metrics.snapshots.labels(processor.spec.name).inc(len(assigned))

    async def _run(self) -> None:
        assert self.consumer is not None
        try:
            while True:
                if self.pending is not None:
                    async with self.processor.lock:
                        await self._rebuild_pending()
                batch = await self.consumer.getmany(timeout_ms=100, max_records=MAX_BATCH)
                if batch:
                    await self._decide(batch)
        except asyncio.CancelledError as error:
            task = asyncio.current_task()
            if task is None or task.cancelling():  # stopped by us
                raise
            # A library's own cancellation leaking out (aiokafka's consumer stop did): the loop
            # would end silently and the instance stay up deciding nothing.
            log.error("consumer loop cancelled from inside")
            self.fatal(error)
        except FatalError as error:
            self.fatal(error)
        except Exception as error:  # the loop itself broke: nothing would be decided any more
            log.exception("consumer loop failed")
            self.fatal(error)

    def _membership(self) -> Membership:
        if self.consumer is None:
            return Membership(None, None, False)
        return self.consumer.membership()

    def identity(self) -> Member | None:
        """This member as the group coordinator knows it: what fences its offset commits."""
        member_id = self._membership().member_id
        if member_id is None or self.generation is None:
            return None
        return Member(self.generation, member_id)

    def current_generation(self) -> int | None:
        return self._membership().generation

    def healthy(self) -> bool:
        """Ready to decide: the state of every assigned partition rebuilt, still the member of
        the generation it was rebuilt for, and a broker that answered the last tick's ask for
        the log's ends (the holdem_ready gauge; a container's health check). A process cut off
        from the broker still believes itself a member (it learns it was evicted only from the
        broker), so the unanswered ask is what tells it, and its health check, it cannot decide."""
        return self.ready and self.pending is None and self.member() and not self._unreachable

    def member(self) -> bool:
        """Still the member of the generation this state was rebuilt for, with no rebalance
        pending. A member evicted while busy (its rebuild outlasting the session timeout, say)
        learns it only from its next heartbeat, and aiokafka commits a transaction's offsets by
        group id alone (no KIP-447 generation check): a batch it committed then would be decided
        a second time by the partition's new owner. So it stops deciding by itself."""
        now = self._membership()
        if now.generation is None or self.generation is None:
            return False
        return now.generation == self.generation and not now.rejoin_pending

    async def _decide(self, batch: Batch) -> None:
        processor = self.processor
        offsets: Offsets = {}
        async with processor.lock:
            await self._rebuild_pending()  # assigned while this batch was fetched: its records
            # Fetched before a revoke, or by a member that is no longer one: the next
            # assignment reads these records again from the committed offsets.
            if not self.ready or not self.member():
                return
            for tp, records in batch.items():
                for record in records:
                    if record.value is None:  # a tombstone: bad input too, never dropped
                        await processor.tombstone(
                            tp.topic, tp.partition, record.offset, record.key, record.headers
                        )
                    elif processor.wants(tp.topic, type_header(record.headers)):
                        await processor.process(
                            tp.topic,
                            tp.partition,
                            record.offset,
                            record.value,
                            record.key,
                            record.headers,
                        )
                offsets[tp] = records[-1].offset + 1
            await self._snapshot_if_due(offsets)
            if not self.member():  # lost the partitions while deciding: commit nothing
                self.outbox.discard()
                processor.reset()  # it folded the batch's own events: rebuilt at reassignment
                self.ready = False
                log.warning("membership lost mid-batch: batch discarded", group=self.group_id)
                return
            await self.outbox.commit(offsets, self.group_id, self.identity())
            self._progress_at = time.monotonic()
        self.batches += 1
        name = processor.spec.name
        processor.metrics.records.labels(name).inc(sum(len(r) for r in batch.values()))
        processor.metrics.batches.labels(name).inc()

    async def caught_up(self) -> bool:
        """Every assigned partition read to its end, as the broker says now: ticks judge
        timeouts only then. A broker it cannot ask is a stall; the first answer after one is a
        resumption (``resumed_at``)."""
        consumer = self.consumer
        if consumer is None or not self.ready or not self.member() or not consumer.assignment():
            return False
        assigned = sorted(consumer.assignment())
        try:
            ends = await asyncio.wait_for(consumer.end_offsets(assigned), CAUGHT_UP_TIMEOUT_S)
        except Exception as error:  # whatever kept the broker from answering: a stall
            if not self._unreachable:
                log.warning("broker not answering: timers wait", error=repr(error))
            self._unreachable = True
            return False
        if self._unreachable:
            self._unreachable = False
            self.resumed_at = datetime.now(UTC)
            log.info("broker answering again: timers count from now")
        for tp in assigned:
            position = consumer.known_position(tp)  # position() would wait while it has none
            if position is None or position < ends[tp]:
                return False
        return True

    async def watch(self) -> None:
        """Liveness: a member serving its partitions (rebuilt, still the member), with records
        waiting on them (or no position to read them from: its committed offsets never
        answered) and a broker that answers, that has decided no batch for ``stall_s`` is
        stalled: it says so and ends (status 70) for its supervisor, whose restart starts it
        over (a new producer epoch ends what its transactional id left open). A rebuild has its
        own bounds; a broker that does not answer is an outage, not this instance's stall."""
        consumer = self.consumer
        now = time.monotonic()
        if consumer is None or not self.ready or self.pending is not None or not self.member():
            self._progress_at = now
            return
        assigned = sorted(consumer.assignment())
        try:
            ends = await asyncio.wait_for(consumer.end_offsets(assigned), CAUGHT_UP_TIMEOUT_S)
        except Exception:  # the broker away: caught_up logs it; the clock starts again after
            self._progress_at = time.monotonic()
            return
        waiting = {}
        for tp in assigned:
            position = consumer.known_position(tp)
            if position is None or position < ends[tp]:
                waiting[f"{tp.topic}-{tp.partition}"] = (position, ends[tp])
        if not waiting:  # idle, not stalled
            self._progress_at = time.monotonic()
            return
        stalled_s = time.monotonic() - self._progress_at
        if stalled_s < self.stall_s:
            return
        log.critical(
            "stalled: records waiting and nothing decided, exiting for a restart",
            group=self.group_id,
            seconds=round(stalled_s, 1),
            waiting={tp: {"position": p, "end": end} for tp, (p, end) in sorted(waiting.items())},
        )
        self.fatal(
            StalledError(f"nothing decided for {stalled_s:.0f}s with records waiting: {waiting}")
        )

    async def measure_lag(self) -> None:
        consumer = self.consumer
        if consumer is None:
            return
        name = self.processor.spec.name
        for tp in consumer.assignment():
            high, position = consumer.highwater(tp), consumer.known_position(tp)
            if high is not None and position is not None:
                behind = max(high - position, 0)
                self.processor.metrics.lag.labels(name, tp.topic, str(tp.partition)).set(behind)
