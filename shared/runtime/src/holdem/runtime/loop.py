"""The service's consume-transform-produce loop on aiokafka: one transaction per poll batch.

Each poll batch is decided record by record against the state, then every event it produced and
the batch's consumer offsets are committed in one transaction (``send_offsets_to_transaction``):
effects and progress commit or abort together. No framework work per record: faststream keeps
the app's lifecycle, the AsyncAPI documents and the in-memory tests. A record is decided only
once the state of its partition is rebuilt for the current assignment; a replay that fails, or
a producer that cannot commit, ends the process (status 70) for its supervisor to restart."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

import structlog
from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

from holdem.runtime.outbox import FatalError, Offsets, TransactionalOutbox
from holdem.runtime.processor import Processor
from holdem.runtime.replay import replay, type_header
from holdem.runtime.settings import RuntimeSettings
from holdem.runtime.snapshots import Snapshot, latest, snapshot_topic

log = structlog.get_logger(__name__)
FETCH_MAX_WAIT_MS = 50  # a read_committed fetch is not woken by a commit: keep the idle wait short
MAX_BATCH = 500  # records per poll: one transaction each
SESSION_TIMEOUT_MS = 6_000  # a killed instance's partitions move after this (the broker's minimum)
HEARTBEAT_MS = 1_000
REPLAY_TIMEOUT_S = 120.0  # without progress: a long log is read to its end

Fatal = Callable[[BaseException], Any]


class DuplicateInstanceError(RuntimeError):
    """Another live instance already runs with this service's instance id."""


class Rebuild(ConsumerRebalanceListener):  # type: ignore[misc]
    """Rebuild the state of exactly the assigned partitions before any of their records is
    decided; a revoke stops a rebuild in progress, waits for the batch in flight to commit,
    then forgets the state."""

    def __init__(self, loop: ServiceLoop) -> None:
        self.loop = loop

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self.loop.cancel_rebuild()
        processor = self.loop.processor
        async with processor.lock:  # the batch in flight commits first
            self.loop.ready = False
            processor.metrics.lag.clear()
            processor.reset()

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        # The replay runs in the loop's task, not here: aiokafka sends no heartbeat while a
        # listener runs, so a replay longer than the session got the member expelled and the
        # next assignment replayed again, without end. The partitions stay paused until their
        # state is rebuilt: none of their records is fetched before.
        self.loop.assigned(assigned)


class ServiceLoop:
    """One service instance's consumer, outbox and processor."""

    def __init__(
        self,
        processor: Processor[Any],
        outbox: TransactionalOutbox,
        settings: RuntimeSettings,
        fatal: Fatal,
    ) -> None:
        self.processor = processor
        self.outbox = outbox
        self.settings = settings
        self.fatal = fatal
        scope = f"{settings.topic_prefix}." if settings.topic_prefix else ""
        self.group_id = f"{scope}holdem-{processor.spec.name}"
        self.client_id = f"{self.group_id}-{settings.instance_id}"
        self.ready = False
        self.batches = 0
        self.consumer: AIOKafkaConsumer | None = None
        self._task: asyncio.Task[None] | None = None
        self.snapshot_topic = snapshot_topic(settings.topics, processor.spec.name)
        self._snapshot_due = 0.0
        self._pending: list[int] | None = None  # assigned partitions whose state is not rebuilt
        self._rebuilding: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await refuse_duplicate(self.settings, self.group_id, self.client_id)
        inputs = [self.processor.topic_of(role) for role in self.processor.spec.inputs]
        self.consumer = AIOKafkaConsumer(
            **self.settings.connection.kwargs(),
            group_id=self.group_id,
            client_id=self.client_id,
            enable_auto_commit=False,  # offsets go into each batch's transaction
            auto_offset_reset="earliest",
            isolation_level="read_committed",
            fetch_max_wait_ms=FETCH_MAX_WAIT_MS,
            max_poll_records=MAX_BATCH,
            session_timeout_ms=SESSION_TIMEOUT_MS,
            heartbeat_interval_ms=HEARTBEAT_MS,
        )
        self.consumer.subscribe(inputs, listener=Rebuild(self))
        await self.consumer.start()
        self._task = asyncio.create_task(self._run(), name=f"{self.group_id}-loop")

    async def stop(self) -> None:
        await self.cancel_rebuild()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.consumer is not None:
            await self.consumer.stop()  # a dynamic member leaves the group: a quick hand-over

    def assigned(self, assigned: set[TopicPartition]) -> None:
        """Pause the newly assigned partitions until the loop has rebuilt their state."""
        if self.consumer is not None:
            self.consumer.pause(*assigned)
        self._pending = sorted({tp.partition for tp in assigned})

    async def cancel_rebuild(self) -> None:
        """Stop a rebuild whose assignment is being revoked; one that failed still ends the
        process."""
        task, self._rebuilding, self._pending = self._rebuilding, None, None
        if task is None:
            return
        task.cancel()
        await asyncio.wait([task])
        error = None if task.cancelled() else task.exception()
        if error is not None:
            self.fatal(error)

    async def _rebuild_when_assigned(self) -> None:
        """Start the rebuild of a new assignment, and once it is done resume its partitions.
        The loop goes on polling meanwhile (nothing to fetch while they are paused), so the
        consumer is not taken for idle however long the replay."""
        task, consumer = self._rebuilding, self.consumer
        if task is not None and task.done():
            self._rebuilding = None
            task.result()  # a replay that failed or timed out ends the process (in _run)
            if consumer is not None:
                consumer.resume(*consumer.paused())
        if self._pending is not None and self._rebuilding is None:
            partitions, self._pending = self._pending, None
            self._rebuilding = asyncio.create_task(self.rebuild(partitions), name="rebuild")

    async def rebuild(self, partitions: list[int]) -> None:
        """Each assigned partition from its latest snapshot (if any) plus the log's tail."""
        processor = self.processor
        topics = [processor.topic_of(role) for role in processor.spec.state_roles]
        inputs = {processor.topic_of(role) for role in processor.spec.inputs}

        def wanted(topic: str, kind: bytes | None) -> bool:
            # What it skips unparsed when it consumes a topic, it skips when it replays it
            # too; a topic only it writes (its ledger, its vault) is folded whole.
            return topic not in inputs or processor.wants(topic, kind)

        async with processor.lock:
            started = time.perf_counter()
            processor.reset()
            starts, loaded = await self._load_snapshots(partitions)
            count = await replay(
                self.settings.connection,
                topics,
                partitions,
                processor.fold,
                starts=starts,
                timeout_s=REPLAY_TIMEOUT_S,
                wanted=wanted,
            )
            seconds = time.perf_counter() - started
            self.ready = True
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
        found = await latest(self.settings.connection, self.snapshot_topic, partitions)
        starts: dict[TopicPartition, int] = {}
        for partition, raw in sorted(found.items()):
            try:
                snapshot = Snapshot.from_bytes(raw, name, partition)
                state = codec.load(snapshot.state)
            except ValueError as error:  # the log is still whole: rebuild from its beginning
                log.error("snapshot unusable, full replay", partition=partition, error=repr(error))
                self.processor.metrics.snapshot_failures.labels(name).inc()
                continue
            self.processor.on_partition(partition).state = state
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
            state = codec.dump(processor.on_partition(partition).state)
            snapshot = Snapshot(processor.spec.name, partition, offsets, state)
            records.append((self.snapshot_topic, partition, snapshot.to_bytes()))
        self.outbox.add_snapshots(records)
        processor.metrics.snapshots.labels(processor.spec.name).inc(len(records))

    async def _run(self) -> None:
        assert self.consumer is not None
        try:
            while True:
                await self._rebuild_when_assigned()
                batch = await self.consumer.getmany(timeout_ms=100, max_records=MAX_BATCH)
                if batch:
                    await self._decide(batch)
        except asyncio.CancelledError:
            raise
        except FatalError as error:
            self.fatal(error)
        except Exception as error:  # the loop itself broke: nothing would be decided any more
            log.exception("consumer loop failed")
            self.fatal(error)

    async def _decide(self, batch: dict[TopicPartition, list[Any]]) -> None:
        processor = self.processor
        offsets: Offsets = {}
        async with processor.lock:
            if not self.ready:  # fetched before a revoke: the next assignment reads them again
                return
            for tp, records in batch.items():
                for record in records:
                    if record.value is not None and processor.wants(
                        tp.topic, type_header(record.headers)
                    ):
                        await processor.process(
                            tp.topic, tp.partition, record.offset, record.value, record.key
                        )
                offsets[tp] = records[-1].offset + 1
            await self._snapshot_if_due(offsets)
            await self.outbox.commit(offsets, self.group_id)
        self.batches += 1
        name = processor.spec.name
        processor.metrics.records.labels(name).inc(sum(len(r) for r in batch.values()))
        processor.metrics.batches.labels(name).inc()

    async def caught_up(self) -> bool:
        """Every assigned partition read to its end: ticks judge timeouts only then."""
        consumer = self.consumer
        if consumer is None or not self.ready or not consumer.assignment():
            return False
        for tp in consumer.assignment():
            high = consumer.highwater(tp)
            if high is None or await consumer.position(tp) < high:
                return False
        return True

    async def measure_lag(self) -> None:
        consumer = self.consumer
        if consumer is None:
            return
        name = self.processor.spec.name
        for tp in consumer.assignment():
            high = consumer.highwater(tp)
            if high is not None:
                behind = max(high - await consumer.position(tp), 0)
                self.processor.metrics.lag.labels(name, tp.topic, str(tp.partition)).set(behind)


async def refuse_duplicate(settings: RuntimeSettings, group_id: str, client_id: str) -> None:
    """Two instances with one id would fence each other's transactions: refuse to start when
    the group has a member with this instance's client id that outlives the session timeout (a
    killed predecessor is dropped by then; a live twin is not)."""
    deadline = time.monotonic() + SESSION_TIMEOUT_MS / 1000 + 3
    while await _is_member(settings, group_id, client_id):
        if time.monotonic() > deadline:
            raise DuplicateInstanceError(
                f"an instance with id {settings.instance_id!r} ({client_id}) is already a live "
                f"member of {group_id}: give each instance its own HOLDEM_INSTANCE_ID"
            )
        log.info("waiting for a member with this id to leave or time out", group=group_id)
        await asyncio.sleep(1.0)


async def _is_member(settings: RuntimeSettings, group_id: str, client_id: str) -> bool:
    admin = AIOKafkaAdminClient(**settings.connection.kwargs(), request_timeout_ms=10_000)
    try:
        await admin.start()
        described = await admin.describe_consumer_groups([group_id])
    except KafkaError as error:  # cannot tell: the transactional id still fences a twin
        log.warning("group not described", group=group_id, error=repr(error))
        return False
    finally:
        await admin.close()
    for response in described:
        for group in getattr(response, "groups", ()):
            for member in _members(group):
                if client_id in (field for field in member if isinstance(field, str)):
                    return True
    return False


def _members(group: Any) -> list[Any]:
    return next((field for field in group if isinstance(field, list)), [])
