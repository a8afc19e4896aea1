"""The transport a service runs (``holdem.runtime.transport`` over aiokafka): its group consumer,
its transactional producer (KIP-447 fenced offsets: ``holdem.runtime.kafka_internals``), the
replay and snapshot readers, the book's follower, the topic check and the group listing."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any

import aiokafka
import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.errors import KafkaError, KafkaTimeoutError, ProducerFenced
from aiokafka.partitioner import DefaultPartitioner

from holdem.core.wire.connection import KafkaConnection, as_connection, start_or_close
from holdem.core.wire.partitioning import partition_for_key
from holdem.runtime import replay as replaying
from holdem.runtime.acks import Unacknowledged, acknowledged
from holdem.runtime.fetch_wait import FetchWait
from holdem.runtime.kafka_internals import (
    FENCED,
    busy,
    install,
    known_position,
    membership,
    send_offsets_as,
    set_fetch_wait,
)
from holdem.runtime.outbox import FatalError, TransactionalOutbox, fenced
from holdem.runtime.snapshots import latest
from holdem.runtime.topic_setup import ensure_topics
from holdem.runtime.transport import (
    Apply,
    Batch,
    GroupSettings,
    Listed,
    Listener,
    Member,
    Membership,
    Offsets,
    Record,
    SnapshotRecord,
    TopicPartition,
    Wanted,
)

log = structlog.get_logger(__name__)
# The fetch wait a consumer starts with; from its first poll on, holdem.runtime.fetch_wait
# chooses it (short while records flow, long when idle: issue 28, "idle is idle").
FETCH_MAX_WAIT_MS = FetchWait().busy_ms
# How long the broker lets a transaction stay open before it aborts it (and fences its producer).
# A new owner's rebuild waits for every transaction open when it began (a frozen predecessor's
# batch: replay.settled_ends, stable offsets): this bounds how long a frozen instance can hold its
# partitions up (aiokafka's default: 60 s; Kafka Streams under exactly-once: 10 s). A batch's
# transaction takes well under a second; a broker outage longer than this ends the instances
# that had one open (exit 70, for their supervisor), which the 12 s outage tests would see.
TRANSACTION_TIMEOUT_MS = 15_000
# A transaction's records for one partition go in one produce batch: at aiokafka's 16 KiB a
# batch of 500 decisions filled several per partition, and each full one made a send wait for a
# produce request of its own (issue 28). Below the broker's 1 MiB message.max.bytes.
PRODUCE_BATCH_BYTES = 512 * 1024
# A produce sent again waits this long first (aiokafka's default: 100 ms). What it is sent again
# after is an answer the next try gets right away (KIP-890's verification meeting a transaction
# write: ADR 036), not an overloaded broker.
RETRY_BACKOFF_MS = 20
# How long a transaction's records may go unacknowledged before its offsets: past the
# transaction's timeout the broker has aborted it anyway (ADR 036).
ACK_TIMEOUT_S = TRANSACTION_TIMEOUT_MS / 1000
# How long the abort of a transaction whose records went unacknowledged is waited for.
ABORT_TIMEOUT_S = 5.0


def unreachable(error: BaseException) -> bool:
    """Whether a failed start is the broker's absence (a connection or a wait that ran out),
    which a restart may outlive, rather than a refusal no restart changes (an authorization, a
    topic with another partition count)."""
    if isinstance(error, KafkaError):
        return bool(error.retriable) or isinstance(error, KafkaTimeoutError)
    return isinstance(error, (TimeoutError, OSError))


def _tp(tp: TopicPartition) -> aiokafka.TopicPartition:
    return aiokafka.TopicPartition(tp.topic, tp.partition)


def _adapt(consumer: AIOKafkaConsumer, wait: FetchWait, batch: Batch) -> None:
    """Tell ``wait`` what a poll returned; a changed wait goes to the consumer's next fetches."""
    before = wait.wait_ms
    after = wait.polled(sum(len(records) for records in batch.values()))
    if after != before:
        set_fetch_wait(consumer, after)
        log.debug("fetch wait changed", wait_ms=after)


class _Rebalance(ConsumerRebalanceListener):  # type: ignore[misc]
    """aiokafka takes only its own listener class: this one hands each call on."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener

    async def on_partitions_revoked(self, revoked: set[Any]) -> None:
        await self.listener.on_partitions_revoked(revoked)

    async def on_partitions_assigned(self, assigned: set[Any]) -> None:
        await self.listener.on_partitions_assigned(assigned)


class KafkaGroupConsumer:
    """An ``AIOKafkaConsumer`` in the service's group: no auto commit (offsets go into each
    batch's transaction), read_committed, from the earliest offset when the group has none."""

    def __init__(self, connection: KafkaConnection, settings: GroupSettings) -> None:
        self.consumer = AIOKafkaConsumer(
            **connection.kwargs(),
            group_id=settings.group_id,
            client_id=settings.client_id,
            enable_auto_commit=False,  # offsets go into each batch's transaction
            auto_offset_reset="earliest",
            isolation_level="read_committed",
            fetch_max_wait_ms=FETCH_MAX_WAIT_MS,
            max_poll_records=settings.max_records,
            session_timeout_ms=settings.session_timeout_ms,
            heartbeat_interval_ms=settings.heartbeat_ms,
            max_poll_interval_ms=settings.max_poll_interval_ms,
            group_instance_id=settings.instance_id,  # static membership (ADR 037)
            # Co-partitioned: range gives each member the same partition numbers of every input
            # topic (equal counts, one subscription), so one instance owns all of a player's
            # records; aiokafka's default (round robin) split them between two owners.
            partition_assignment_strategy=(RangePartitionAssignor,),
        )
        self.fetch_wait = FetchWait()

    def subscribe(self, topics: Sequence[str], listener: Listener) -> None:
        self.consumer.subscribe(list(topics), listener=_Rebalance(listener))

    async def start(self) -> None:
        install()  # the committed offsets it starts from are stable ones (KIP-447)
        await start_or_close(self.consumer)

    async def stop(self) -> None:
        await self.consumer.stop()

    async def getmany(self, *, timeout_ms: int, max_records: int) -> Batch:
        batch: Batch = await self.consumer.getmany(timeout_ms=timeout_ms, max_records=max_records)
        _adapt(self.consumer, self.fetch_wait, batch)
        return batch

    def assignment(self) -> set[Any]:
        return set(self.consumer.assignment())

    async def position(self, tp: TopicPartition) -> int:
        found: int = await self.consumer.position(_tp(tp))
        return found

    def known_position(self, tp: TopicPartition) -> int | None:
        return known_position(self.consumer, _tp(tp))

    def highwater(self, tp: TopicPartition) -> int | None:
        found: int | None = self.consumer.highwater(_tp(tp))
        return found

    async def end_offsets(self, tps: Sequence[TopicPartition]) -> dict[Any, int]:
        found: dict[Any, int] = await self.consumer.end_offsets([_tp(tp) for tp in tps])
        return found

    async def committed(self, tps: Sequence[TopicPartition]) -> dict[Any, int | None]:
        found: dict[Any, int | None] = {}
        for tp in tps:  # OffsetFetch v7, require_stable (kafka_internals.install)
            found[tp] = await self.consumer.committed(_tp(tp))
        return found

    def membership(self) -> Membership:
        return membership(self.consumer)

    def busy(self) -> contextlib.AbstractContextManager[Any]:
        return busy(self.consumer)


def key_partitioner(key: bytes | None, all_partitions: list[int], available: list[int]) -> int:
    """aiokafka's default partitioner (murmur2 of the key, as Java's), with the hash taken from
    the bounded cache the services' check of every consumed record uses: aiokafka's pure-Python
    murmur2 cost 3.2 us a record sent, a cached key 0.1 us (players come back every round)."""
    if key is None:
        return int(DefaultPartitioner()(key, all_partitions, available))
    return all_partitions[partition_for_key(key, len(all_partitions))]


class KafkaProducer:
    """An ``AIOKafkaProducer`` with a transactional id per instance (a restarted instance fences
    its predecessor's unfinished transactions); offsets sent as the group's member (KIP-447)."""

    def __init__(
        self, connection: KafkaConnection | str, transactional_id: str, retries: int = 5
    ) -> None:
        self._connection = as_connection(connection)
        self.transactional_id = transactional_id
        self._producer: AIOKafkaProducer | None = None
        self._retries = retries

    async def start(self) -> None:
        # Made here, not in __init__: aiokafka needs a running loop, and a service's app is
        # built before its loop runs (holdem.runtime.app.run).
        install()  # its offset commits are generation-fenced (KIP-447)
        self._producer = AIOKafkaProducer(
            **self._connection.kwargs(),
            transactional_id=self.transactional_id,
            enable_idempotence=True,
            acks="all",
            linger_ms=0,
            max_batch_size=PRODUCE_BATCH_BYTES,
            transaction_timeout_ms=TRANSACTION_TIMEOUT_MS,
            retry_backoff_ms=RETRY_BACKOFF_MS,
            partitioner=key_partitioner,
        )
        await start_or_close(self._producer)

    async def stop(self) -> None:
        if self._producer is not None:
            await self._producer.stop()

    async def renew(self) -> None:
        await self.stop()
        self._producer = None
        await self.start()

    async def transact(
        self,
        records: Sequence[Record],
        snapshots: Sequence[SnapshotRecord],
        offsets: Offsets,
        group_id: str | None,
        member: Member | None,
    ) -> None:
        """Retried whole; a fenced producer, a fenced member or a commit that fails every retry
        raises FatalError."""
        producer = self._producer
        if producer is None:
            raise RuntimeError("TransactionalOutbox.commit before start")
        for attempt in range(self._retries + 1):
            try:
                await self._attempt(producer, records, snapshots, offsets, group_id, member)
                return
            except ProducerFenced as error:  # another instance took our transactional id
                raise FatalError(fenced(self.transactional_id, error)) from error
            except FENCED as error:  # the group moved on: this member's batch is another's now
                raise FatalError(
                    f"offsets refused, no longer the group's member: {error!r}"
                ) from error
            except (Unacknowledged, TimeoutError) as error:  # the broker is gone: no retry
                raise FatalError(f"transaction not acknowledged: {error!r}") from error
            except KafkaError as error:
                if attempt == self._retries:
                    raise FatalError(f"commit failed {attempt + 1} times: {error!r}") from error
                log.warning("commit failed, retrying", error=repr(error), attempt=attempt + 1)
                await asyncio.sleep(0.2 * 2**attempt)

    @staticmethod
    async def _attempt(
        producer: AIOKafkaProducer,
        records: Sequence[Record],
        snapshots: Sequence[SnapshotRecord],
        offsets: Offsets,
        group_id: str | None,
        member: Member | None,
    ) -> None:
        """One transaction. The offsets are sent once every record is acknowledged (ADR 036);
        records unacknowledged after ACK_TIMEOUT_S raise Unacknowledged once the abort has been
        waited for at most ABORT_TIMEOUT_S (TimeoutError past it)."""
        async with asyncio.timeout(None) as bound, producer.transaction():
            sent = [
                await producer.send(
                    record.topic,
                    value=record.value,
                    key=record.key.encode(),
                    headers=record.header_list(),
                )
                for record in records
            ]
            for name, partition, part_key, snapshot in snapshots:
                sent.append(
                    await producer.send(name, value=snapshot, key=part_key, partition=partition)
                )
            if offsets and group_id is not None:
                try:
                    await acknowledged(sent, ACK_TIMEOUT_S)
                except Unacknowledged:
                    bound.reschedule(asyncio.get_running_loop().time() + ABORT_TIMEOUT_S)
                    raise
                await send_offsets_as(producer, offsets, group_id, member)


def transactional_outbox(
    connection: KafkaConnection | str, transactional_id: str, retries: int = 5
) -> TransactionalOutbox:
    """An outbox committing through a Kafka transactional producer."""
    return TransactionalOutbox(KafkaProducer(connection, transactional_id, retries))


class KafkaFollower:
    """A group-less ``AIOKafkaConsumer`` assigned partitions, read from their beginning."""

    def __init__(self, connection: KafkaConnection, tps: Sequence[TopicPartition]) -> None:
        self.tps = [_tp(tp) for tp in tps]
        self.consumer = AIOKafkaConsumer(
            **connection.kwargs(),
            group_id=None,
            enable_auto_commit=False,
            isolation_level="read_committed",
            auto_offset_reset="earliest",
            fetch_max_wait_ms=FETCH_MAX_WAIT_MS,
        )
        self.fetch_wait = FetchWait()

    async def start(self) -> None:
        await start_or_close(self.consumer)
        self.consumer.assign(self.tps)

    async def stop(self) -> None:
        await self.consumer.stop()

    async def getmany(self, *, timeout_ms: int) -> Batch:
        batch: Batch = await self.consumer.getmany(timeout_ms=timeout_ms)
        _adapt(self.consumer, self.fetch_wait, batch)
        return batch


class KafkaTransport:
    """``holdem.runtime.transport.Transport`` on a Kafka cluster, as one principal."""

    def __init__(self, connection: KafkaConnection | str) -> None:
        self.connection = as_connection(connection)

    def consumer(self, settings: GroupSettings) -> KafkaGroupConsumer:
        return KafkaGroupConsumer(self.connection, settings)

    def producer(self, transactional_id: str, retries: int) -> KafkaProducer:
        return KafkaProducer(self.connection, transactional_id, retries)

    def follower(self, tps: Sequence[TopicPartition]) -> KafkaFollower:
        return KafkaFollower(self.connection, tps)

    async def replay(
        self,
        topics: Collection[str],
        partitions: Collection[int],
        apply: Apply,
        *,
        starts: Mapping[Any, int] | None = None,
        timeout_s: float = 120.0,
        wanted: Wanted | None = None,
        stuck: Callable[[], Awaitable[None]] | None = None,
    ) -> int:
        # Looked up when called: a test may wrap holdem.runtime.replay.replay in a process.
        return await replaying.replay(
            self.connection,
            topics,
            partitions,
            apply,
            starts=starts,
            timeout_s=timeout_s,
            wanted=wanted,
            stuck=stuck,
        )

    async def latest_snapshots(self, topic: str, partitions: list[int]) -> dict[int, bytes]:
        return await latest(self.connection, topic, partitions)

    async def ensure_topics(self, names: Sequence[str], partitions: int) -> None:
        await ensure_topics(self.connection, names, partitions)

    def admin(self) -> KafkaGroupAdmin:
        return KafkaGroupAdmin(self.connection)


class KafkaGroupAdmin:
    """One admin client for an instance's group listings, started on first use and kept (a new
    client per listing logged in, and logged "Authenticated as", every time); one group per
    describe call (aiokafka failed to decode this broker's reply for several at once)."""

    def __init__(self, connection: KafkaConnection) -> None:
        self.connection = connection
        self._admin: AIOKafkaAdminClient | None = None

    async def members(self, group_id: str) -> list[Listed] | None:
        try:
            if self._admin is None:
                admin = AIOKafkaAdminClient(**self.connection.kwargs(), request_timeout_ms=10_000)
                try:
                    await admin.start()
                except BaseException:
                    await admin.close()
                    raise
                self._admin = admin
            described = await self._admin.describe_consumer_groups([group_id])
        except KafkaError as error:
            log.info("group not described", group=group_id, error=repr(error))
            return None
        groups = [group for response in described for group in response.to_object()["groups"]]
        if len(groups) != 1 or groups[0]["error_code"] != 0:
            log.info("group not described", group=group_id, groups=repr(groups)[:200])
            return None
        return [Listed(m["member_id"], m["client_id"]) for m in groups[0]["members"]]

    async def close(self) -> None:
        if self._admin is not None:
            await self._admin.close()
            self._admin = None
