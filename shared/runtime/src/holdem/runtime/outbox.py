"""Where a decision's events go: one Kafka transaction per decision, or an in-memory broker."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

import structlog
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError
from faststream.kafka import KafkaBroker

log = structlog.get_logger(__name__)

Record = tuple[str, str, bytes]  # topic, key (player_id), value (JSON)


class Outbox(Protocol):
    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    async def send(self, records: Sequence[Record]) -> None:
        """Publish all records or none of them."""


class TransactionalOutbox:
    """All events of one decision in one aiokafka transaction: consumers that read committed
    see every event of a decision or none, even if the process dies half-way."""

    def __init__(self, bootstrap: str, transactional_id: str, retries: int = 5) -> None:
        self._producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap,
            transactional_id=transactional_id,
            enable_idempotence=True,
            acks="all",
            linger_ms=0,
        )
        self._retries = retries

    async def start(self) -> None:
        await self._producer.start()

    async def stop(self) -> None:
        await self._producer.stop()

    async def send(self, records: Sequence[Record]) -> None:
        if not records:
            return
        for attempt in range(self._retries + 1):
            try:
                async with self._producer.transaction():
                    for topic, key, value in records:
                        await self._producer.send(topic, value=value, key=key.encode())
                return
            except KafkaError as error:
                if attempt == self._retries:
                    raise
                log.warning("publish failed, retrying", error=repr(error), attempt=attempt + 1)
                await asyncio.sleep(0.2 * 2**attempt)


class BrokerOutbox:
    """Publishes through a faststream broker: used with TestKafkaBroker in in-memory tests."""

    def __init__(self, broker: KafkaBroker) -> None:
        self._broker = broker

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def send(self, records: Sequence[Record]) -> None:
        for topic, key, value in records:
            await self._broker.publish(value, topic, key=key.encode())
