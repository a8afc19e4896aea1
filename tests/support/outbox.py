"""An outbox that keeps what a processor publishes, for tests that call the processor directly."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from holdem.core.contracts import parse
from holdem.core.wire.topics import Topics
from holdem.runtime.transport import Record


class ListOutbox:
    """Every published record, in order; ``fail`` makes the next send raise it."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.fail: BaseException | None = None

    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    async def flush(self) -> None: ...

    async def send(self, records: Sequence[Record]) -> None:
        if self.fail is not None:
            raise self.fail
        self.records.extend(records)

    def parsed(self, role: str) -> list[Any]:
        topic = getattr(Topics(), role)
        return [parse(role, r.value) for r in self.records if r.topic == topic]


async def handle(
    processor: Any,
    topic: str,
    partition: int,
    offset: int,
    raw: bytes,
    key: bytes | None = None,
    headers: Any = None,
) -> None:
    """One record decided on its own and what it decided committed: the service loop's batch of
    one record, without the loop (the caller gives the record's coordinates)."""
    async with processor.lock:
        await processor.process(topic, partition, offset, raw, key, headers)
    await processor.outbox.flush()
