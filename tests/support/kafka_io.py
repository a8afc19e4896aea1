"""Plain aiokafka helpers for tests: produce a record, read a whole topic (committed only)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord

from holdem.core.contracts import dump
from holdem.core.wire.connection import KafkaConnection, as_connection, start_or_close
from holdem.harness.audit_read import partitions_of, read_topic

__all__ = ["consumer", "partitions_of", "produce", "read_all", "send_messages", "wait_for"]


async def produce(connection: KafkaConnection | str, topic: str, key: str, value: bytes) -> None:
    producer = AIOKafkaProducer(**as_connection(connection).kwargs(), acks="all")
    await producer.start()
    try:
        await producer.send_and_wait(topic, value=value, key=key.encode())
    finally:
        await producer.stop()


async def send_messages(connection: KafkaConnection | str, topic: str, messages: list[Any]) -> None:
    """Publish messages keyed by their player, as a client would (acks=all)."""
    producer = AIOKafkaProducer(**as_connection(connection).kwargs(), acks="all")
    await producer.start()
    try:
        for message in messages:
            await producer.send(topic, value=dump(message), key=message.player_id.encode())
        await producer.flush()
    finally:
        await producer.stop()


async def read_all(
    connection: KafkaConnection | str, topic: str
) -> list[ConsumerRecord[bytes, bytes]]:
    """Every committed record of ``topic`` up to its current end (the audit's reader)."""
    return await read_topic(connection, topic)


async def wait_for(predicate: Callable[[], Awaitable[bool]], timeout: float) -> None:
    """Poll ``predicate`` until it holds; TimeoutError (a failure) after ``timeout`` seconds."""
    async with asyncio.timeout(timeout):
        while not await predicate():
            await asyncio.sleep(0.2)


class consumer:
    """A consumer of ``topic`` in ``group_id``, from the earliest committed record."""

    def __init__(self, connection: KafkaConnection, topic: str, group_id: str) -> None:
        self._consumer = AIOKafkaConsumer(
            topic,
            **connection.kwargs(),
            group_id=group_id,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            isolation_level="read_committed",
        )

    async def __aenter__(self) -> AIOKafkaConsumer:
        await start_or_close(self._consumer)
        return self._consumer

    async def __aexit__(self, *exc: object) -> None:
        await self._consumer.stop()
