"""Where a decision's events go: one Kafka transaction per decision, or an in-memory broker."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from typing import NamedTuple, Protocol

import structlog
from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError, ProducerFenced
from faststream.kafka import KafkaBroker

from holdem.core.wire.connection import KafkaConnection, as_connection
from holdem.core.wire.headers import TYPE_HEADER
from holdem.runtime.kafka_internals import FENCED, Member, install, send_offsets_as

log = structlog.get_logger(__name__)


class Record(NamedTuple):
    """One record to publish: its topic, key (player_id or table_id), value (JSON), message
    type (the ``type`` header) and further headers (``operator``, ``brand``: ADR 021)."""

    topic: str
    key: str
    value: bytes
    kind: str
    headers: tuple[tuple[str, bytes], ...] = ()

    def header_list(self) -> list[tuple[str, bytes]]:
        """Every header of the record, aiokafka's form: the type first."""
        return [(TYPE_HEADER, self.kind.encode()), *self.headers]

    def header_map(self) -> dict[str, str]:
        """The same headers in faststream's form (in-memory brokers)."""
        return {name: value.decode() for name, value in self.header_list()}


Offsets = dict[TopicPartition, int]  # the next offset to read, per input partition


class FatalError(RuntimeError):
    """The service can no longer publish (fenced, or the broker refused every retry): the
    process must exit non-zero so that its supervisor restarts it, never live on doing nothing.
    The input that was being handled is not committed, so the new process handles it again."""


class Outbox(Protocol):
    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    async def send(self, records: Sequence[Record]) -> None:
        """Take a decision's records: published with the next commit, all or none."""

    async def flush(self) -> None:
        """Publish what was sent since the last commit (ticks; in-memory delivery)."""


class TransactionalOutbox:
    """Exactly-once per poll batch: the records of every decision of a batch and the consumer
    offsets of that batch are committed in one aiokafka transaction
    (``send_offsets_to_transaction``), so effects and progress commit or abort together, and
    read_committed consumers see all of a batch or none of it."""

    def __init__(
        self, connection: KafkaConnection | str, transactional_id: str, retries: int = 5
    ) -> None:
        self._connection = as_connection(connection)
        self._transactional_id = transactional_id
        self._producer: AIOKafkaProducer | None = None
        self._retries = retries
        self._pending: list[Record] = []
        self._snapshots: list[tuple[str, int, bytes, bytes]] = []  # topic, partition, key, value
        self._committing = asyncio.Lock()  # a tick's commit and a batch's never overlap

    @property
    def transactional_id(self) -> str:
        return self._transactional_id

    async def start(self) -> None:
        # Made here, not in __init__: aiokafka needs a running loop, and a service's app is
        # built before its loop runs (holdem.runtime.app.run).
        install()  # its offset commits are generation-fenced (KIP-447)
        self._producer = AIOKafkaProducer(
            **self._connection.kwargs(),
            transactional_id=self._transactional_id,
            enable_idempotence=True,
            acks="all",
            linger_ms=0,
        )
        await self._producer.start()

    async def stop(self) -> None:
        if self._producer is not None:
            await self._producer.stop()

    async def send(self, records: Sequence[Record]) -> None:
        self._pending.extend(records)

    def discard(self) -> None:
        """Drop what is pending (a batch decided by a member that lost its partitions)."""
        self._pending, self._snapshots = [], []

    def add_snapshots(self, snapshots: Sequence[tuple[str, int, bytes, bytes]]) -> None:
        """Snapshot records for the next commit: (topic, partition, key, value)."""
        self._snapshots.extend(snapshots)

    async def flush(self) -> None:
        await self.commit({}, None)

    async def commit(
        self, offsets: Offsets, group_id: str | None, member: Member | None = None
    ) -> None:
        """One transaction: every pending record, then the batch's offsets, sent as ``member``
        of the group (KIP-447: the coordinator refuses them from a member it no longer knows,
        and the transaction aborts). Retried whole; a fenced producer, a fenced member or a
        commit that fails every retry raises FatalError."""
        async with self._committing:
            records, self._pending = self._pending, []
            snapshots, self._snapshots = self._snapshots, []
            if records or offsets or snapshots:
                await self._commit(records, offsets, group_id, snapshots, member)

    async def _commit(
        self,
        records: list[Record],
        offsets: Offsets,
        group_id: str | None,
        snapshots: list[tuple[str, int, bytes, bytes]],
        member: Member | None,
    ) -> None:
        producer = self._producer
        if producer is None:
            raise RuntimeError("TransactionalOutbox.commit before start")
        for attempt in range(self._retries + 1):
            try:
                async with producer.transaction():
                    for record in records:
                        await producer.send(
                            record.topic,
                            value=record.value,
                            key=record.key.encode(),
                            headers=record.header_list(),
                        )
                    for name, partition, part_key, snapshot in snapshots:
                        await producer.send(name, value=snapshot, key=part_key, partition=partition)
                    if offsets and group_id is not None:
                        await send_offsets_as(producer, offsets, group_id, member)
                return
            except ProducerFenced as error:  # another instance took our transactional id
                raise FatalError(f"producer fenced: {error!r}") from error
            except FENCED as error:  # the group moved on: this member's batch is another's now
                raise FatalError(
                    f"offsets refused, no longer the group's member: {error!r}"
                ) from error
            except KafkaError as error:
                if attempt == self._retries:
                    raise FatalError(f"commit failed {attempt + 1} times: {error!r}") from error
                log.warning("commit failed, retrying", error=repr(error), attempt=attempt + 1)
                await asyncio.sleep(0.2 * 2**attempt)


class BrokerOutbox:
    """Publishes through a faststream broker: used with TestKafkaBroker in in-memory tests."""

    def __init__(self, broker: KafkaBroker) -> None:
        self._broker = broker
        self._queue: deque[Record] = deque()
        self._flushing = False

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def send(self, records: Sequence[Record]) -> None:
        # Queued, not published: TestKafkaBroker runs subscribers inside publish(), and a service
        # reading its own topic would re-enter its handler while holding the processor's lock.
        self._queue.extend(records)

    async def flush(self) -> None:
        # A delivery runs other handlers, whose own flush() must not overtake this loop: the
        # outermost flush delivers everything, in publication order, as Kafka would.
        if self._flushing:
            return
        self._flushing = True
        try:
            while self._queue:
                record = self._queue.popleft()
                await self._broker.publish(
                    record.value, record.topic, key=record.key.encode(), headers=record.header_map()
                )
        finally:
            self._flushing = False
