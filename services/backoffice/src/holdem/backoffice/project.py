"""The projection process: the rounds, wallet, tables and seamless-replies topics, read
committed, into PostgreSQL, exactly once. ``python -m holdem.backoffice.project``.

Positions live in the ``tracking`` table, written in the same transaction as the rows of the
batch that moved them; a start reads them and seeks there (no consumer group, no Kafka
offsets), so a kill -9 at any moment loses or doubles nothing.
"""

from __future__ import annotations

import asyncio
import signal
import time
from typing import Any

import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.errors import KafkaError
from prometheus_client import start_http_server

from holdem.backoffice import db, metrics, store
from holdem.backoffice.logs import configure_logging
from holdem.backoffice.rows import Batch, Where
from holdem.backoffice.settings import BackofficeSettings
from holdem.core.contracts import ContractError, parse
from holdem.core.wire.connection import KafkaConnection, start_or_close
from holdem.core.wire.topics import Topics

log = structlog.get_logger(__name__)
ROLES = ("rounds", "wallet", "tables", "seamless_replies")
REQUIRED = ("rounds", "wallet")  # the others came later (ADR 015, 018)


def connection_of(settings: BackofficeSettings) -> KafkaConnection:
    if settings.kafka_env_file:
        return KafkaConnection.from_file(settings.kafka_env_file)
    return KafkaConnection.from_env()


class Projection:
    """One process's projection of one operator's topics; ``run`` until ``stop``."""

    def __init__(self, settings: BackofficeSettings, connection: KafkaConnection) -> None:
        self.settings = settings
        self.connection = connection
        topics = Topics().with_prefix(settings.topic_prefix) if settings.topic_prefix else Topics()
        self.roles = {getattr(topics, role): role for role in ROLES}
        self.stopping = asyncio.Event()
        self.positions: dict[tuple[str, int], int] = {}

    async def run(self) -> None:
        db.upgrade(self.settings.dsn)
        consumer = AIOKafkaConsumer(
            **self.connection.kwargs(),
            isolation_level="read_committed",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_records=self.settings.max_records,
        )
        await start_or_close(consumer)  # a failed start leaves no consumer open (issue 26)
        try:
            with db.connect(self.settings.dsn) as conn:
                assignment = await self._assign(consumer, conn)
                while not self.stopping.is_set():
                    await self._poll(consumer, conn, assignment)
        finally:
            await consumer.stop()

    async def _assign(self, consumer: AIOKafkaConsumer, conn: Any) -> list[TopicPartition]:
        assignment = []
        for topic in self.roles:
            partitions = await _partitions(self.connection, topic)
            if not partitions:
                if self.roles[topic] in REQUIRED:
                    raise LookupError(f"topic {topic} does not exist")
                log.warning("topic does not exist: not projected", topic=topic)
                continue
            assignment += [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(assignment)
        self.positions = store.positions(conn, list(self.roles))
        beginnings = await consumer.beginning_offsets(assignment)
        for tp in assignment:
            consumer.seek(tp, self.positions.get((tp.topic, tp.partition), beginnings[tp]))
        stored = {f"{name}:{number}": at for (name, number), at in self.positions.items()}
        log.info("projecting", partitions=len(assignment), stored_positions=stored)
        return assignment

    async def _poll(
        self, consumer: AIOKafkaConsumer, conn: Any, assignment: list[TopicPartition]
    ) -> None:
        found = await consumer.getmany(
            timeout_ms=self.settings.poll_ms, max_records=self.settings.max_records
        )
        records = [r for batch in found.values() for r in batch]
        batch = self.batch_of(records) if records else await self._idle(consumer, assignment)
        if batch.positions:
            started = time.perf_counter()
            store.write(conn, batch, self.positions)
            metrics.BATCH_SECONDS.observe(time.perf_counter() - started)
            metrics.ROWS.inc(batch.rows)
            metrics.LAST_COMMIT.set(time.time())
            self.positions.update(batch.positions)
        for tp in assignment:
            stable = consumer.last_stable_offset(tp)
            if stable is not None:
                position = self.positions.get((tp.topic, tp.partition), 0)
                metrics.LAG.labels(tp.topic, str(tp.partition)).set(max(stable - position, 0))

    async def _idle(self, consumer: AIOKafkaConsumer, assignment: list[TopicPartition]) -> Batch:
        """A poll that returned nothing may still have moved past transaction markers and
        aborted records: store that too, so a caught-up projection is at the end offsets."""
        batch = Batch()
        for tp in assignment:
            position = await consumer.position(tp)
            if position > self.positions.get((tp.topic, tp.partition), 0):
                batch.positions[(tp.topic, tp.partition)] = position
        return batch

    def batch_of(self, records: list[ConsumerRecord[bytes, bytes]]) -> Batch:
        batch = Batch()
        default = self.settings.operator()
        for r in records:
            role = self.roles[r.topic]
            headers = {name: value for name, value in reversed(r.headers or ())}
            operator = _text(headers.get("operator")) or default
            where = Where(r.topic, r.partition, r.offset, operator, _text(headers.get("brand")))
            try:
                message = parse(role, r.value or b"")
            except ContractError:
                message = None
            metrics.RECORDS.labels(r.topic, "skipped" if message is None else "projected").inc()
            batch.add(role, where, message)
        return batch


def _text(value: bytes | None) -> str | None:
    if value is None:
        return None
    try:
        return value.decode()
    except UnicodeDecodeError:
        return None


async def _partitions(connection: KafkaConnection, topic: str) -> set[int] | None:
    # A producer fetches one topic's metadata on demand; a consumer's cache holds only its own.
    producer = AIOKafkaProducer(**connection.kwargs())
    await start_or_close(producer)
    try:
        return set(await producer.partitions_for(topic))
    except KafkaError:
        return None
    finally:
        await producer.stop()


def main() -> None:
    configure_logging("backoffice-projection")
    settings = BackofficeSettings()
    if settings.metrics_port:
        start_http_server(settings.metrics_port, addr=settings.metrics_host)
    metrics.announce_build("backoffice-projection")
    projection = Projection(settings, connection_of(settings))

    async def run() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, projection.stopping.set)
        await projection.run()

    asyncio.run(run())


if __name__ == "__main__":
    main()
