"""A running in-memory wallet service (its batch loop on the in-memory transport) and what it
published."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry

from holdem.core.contracts import Envelope, dump, parse
from holdem.runtime.app import ServiceApp
from holdem.runtime.memory import MemoryTransport
from holdem.wallet.app import create_app
from holdem.wallet.settings import WalletSettings
from support.memory import Log, started


@dataclass
class Wallet:
    """A running in-memory wallet and what it published, per topic role."""

    service: ServiceApp
    log: Log

    @property
    def seen(self) -> dict[str, list[bytes]]:
        """The values on each of the wallet's topics, in the order they were written."""
        roles = ("wallet", "rounds", "rejected", "tables")
        return {role: self.log.values(role) for role in roles}

    async def send(self, role: str, message: Envelope | bytes, key: bytes | None = None) -> None:
        raw = message if isinstance(message, bytes) else dump(message)
        if key is None:
            key = b"p1" if isinstance(message, bytes) else message.key.encode()
        await self.log.publish(role, raw, key)

    def types(self, role: str) -> list[str]:
        return [parse(role, raw).type for raw in self.seen[role]]

    def messages(self, role: str) -> list[Any]:
        return [parse(role, raw) for raw in self.seen[role]]


@asynccontextmanager
async def wallet(registry: CollectorRegistry | None = None) -> AsyncIterator[Wallet]:
    transport = MemoryTransport()
    service = create_app(WalletSettings(metrics_port=0), transport=transport, registry=registry)
    async with started(service, transport) as log:
        yield Wallet(service, log)
