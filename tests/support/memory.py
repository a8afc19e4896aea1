"""In-memory service runs: an outbox that delivers a decision's events after its handler returns."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

from faststream.kafka import KafkaBroker
from faststream.kafka.annotations import KafkaMessage

from holdem.runtime.app import ServiceApp
from holdem.runtime.outbox import Record


class DeferredOutbox:
    """Queues published records until the test calls ``pump()``.

    TestKafkaBroker runs subscribers inside ``publish``. The runtime's BrokerOutbox now delivers
    after the processor's lock is released (``flush``), so services no longer deadlock on their
    own topic; this outbox is for tests that want to choose when outputs are delivered.
    """

    def __init__(self, broker: KafkaBroker) -> None:
        self._broker = broker
        self._queue: deque[Record] = deque()

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def send(self, records: Sequence[Record]) -> None:
        self._queue.extend(records)

    async def flush(self) -> None:
        return None  # delivered by pump()

    async def pump(self, limit: int = 10_000) -> int:
        """Deliver queued records (and what they cause) until none is left; returns how many."""
        delivered = 0
        while self._queue:
            if delivered >= limit:
                raise RuntimeError(f"still publishing after {limit} records: a feedback loop?")
            record = self._queue.popleft()
            await self._broker.publish(
                record.value, record.topic, key=record.key.encode(), headers=record.header_map()
            )
            delivered += 1
        return delivered


def defer_publishing(service: ServiceApp) -> DeferredOutbox:
    """Swap the in-memory service's outbox for a DeferredOutbox and return it."""
    outbox = DeferredOutbox(service.broker)
    service.processor.outbox = outbox
    return outbox


def record_outputs(service: ServiceApp, roles: Sequence[str], seen: dict[str, list[bytes]]) -> None:
    """Subscribe observers that append every record of these topic roles to ``seen[role]``
    (before the in-memory broker starts)."""
    for role in roles:
        sink: list[bytes] = seen.setdefault(role, [])
        topic = service.processor.topic_of(role)
        service.broker.subscriber(topic, group_id=f"observer-{role}")(_recorder(sink))


def _recorder(sink: list[bytes]) -> Any:
    async def record(message: KafkaMessage) -> None:
        sink.append(message.body)

    return record
