"""In-memory service runs: the service's own batch loop over the in-memory transport
(holdem.runtime.memory), started with its app's lifecycle, and what it committed per topic."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from holdem.runtime.app import ServiceApp, running
from holdem.runtime.memory import LogRecord, MemoryTransport


@dataclass
class Log:
    """The in-memory log a service runs on, seen by role of the service's topics."""

    service: ServiceApp
    transport: MemoryTransport = field(default_factory=MemoryTransport)

    def topic(self, role: str) -> str:
        return self.service.processor.topic_of(role)

    async def publish(
        self,
        role: str,
        raw: bytes | None,
        key: bytes | None,
        headers: tuple[tuple[str, bytes], ...] = (),
    ) -> None:
        """Write a record on the role's topic as a client would, then wait until everything
        it causes is committed."""
        await self.transport.publish(self.topic(role), raw, key=key, headers=headers)
        await self.transport.settle()

    def records(self, role: str) -> list[LogRecord]:
        return self.transport.records(self.topic(role))

    def values(self, role: str) -> list[bytes]:
        """The values committed on the role's topic, in the order they were written."""
        return self.transport.values(self.topic(role))


@asynccontextmanager
async def started(service: ServiceApp, transport: MemoryTransport) -> AsyncIterator[Log]:
    """The service running on ``transport`` (its app started: topics, loop, ticks), rebuilt
    and idle."""
    async with running(service):
        await transport.settle()
        yield Log(service, transport)
