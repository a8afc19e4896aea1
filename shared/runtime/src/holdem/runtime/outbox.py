"""Where a decision's events go: one Kafka transaction per decision, or an in-memory broker."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from typing import Protocol

import structlog
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError, ProducerFenced
from faststream.kafka import KafkaBroker

from holdem.client.connection import KafkaConnection, as_connection

log = structlog.get_logger(__name__)

Record = tuple[str, str, bytes]  # topic, key (player_id), value (JSON)


class FatalError(RuntimeError):
    """The service can no longer publish (fenced, or the broker refused every retry): the
    process must exit non-zero so that its supervisor restarts it, never live on doing nothing.
    The input that was being handled is not committed, so the new process handles it again."""


class Outbox(Protocol):
    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    async def send(self, records: Sequence[Record]) -> None:
        """Publish all records or none of them."""

    async def flush(self) -> None:
        """Called after the processor's lock is released (in-memory delivery happens here)."""


class TransactionalOutbox:
    """All events of one decision in one aiokafka transaction: consumers that read committed
    see every event of a decision or none, even if the process dies half-way."""

    def __init__(
        self, connection: KafkaConnection | str, transactional_id: str, retries: int = 5
    ) -> None:
        self._connection = as_connection(connection)
        self._transactional_id = transactional_id
        self._producer: AIOKafkaProducer | None = None
        self._retries = retries

    async def start(self) -> None:
        # Made here, not in __init__: aiokafka needs a running loop, and a service's app is
        # built before its loop runs (holdem.runtime.app.run).
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

    async def flush(self) -> None:
        return None  # send() already committed the transaction

    async def send(self, records: Sequence[Record]) -> None:
        if not records:
            return
        producer = self._producer
        if producer is None:
            raise RuntimeError("TransactionalOutbox.send before start")
        for attempt in range(self._retries + 1):
            try:
                async with producer.transaction():
                    for topic, key, value in records:
                        await producer.send(topic, value=value, key=key.encode())
                return
            except ProducerFenced as error:  # another instance took our transactional id
                raise FatalError(f"producer fenced: {error!r}") from error
            except KafkaError as error:
                if attempt == self._retries:
                    raise FatalError(f"publish failed {attempt + 1} times: {error!r}") from error
                log.warning("publish failed, retrying", error=repr(error), attempt=attempt + 1)
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
                topic, key, value = self._queue.popleft()
                await self._broker.publish(value, topic, key=key.encode())
        finally:
            self._flushing = False
