"""A running in-memory wallet service (faststream's TestKafkaBroker) and what it published."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from faststream.kafka import TestKafkaBroker
from prometheus_client import CollectorRegistry

from holdem.core.contracts import Envelope, dump, parse
from holdem.runtime.app import ServiceApp
from holdem.wallet.app import create_app
from holdem.wallet.settings import WalletSettings
from support.memory import DeferredOutbox, defer_publishing, record_outputs

OBSERVED = ("wallet", "rounds", "rejected", "tables")


@dataclass
class Wallet:
    """A running in-memory wallet and what it published, per topic role."""

    service: ServiceApp
    outbox: DeferredOutbox
    broker: Any = None
    seen: dict[str, list[bytes]] = field(default_factory=dict)

    async def send(self, role: str, message: Envelope | bytes, key: bytes | None = None) -> None:
        raw = message if isinstance(message, bytes) else dump(message)
        if key is None:
            key = b"p1" if isinstance(message, bytes) else message.key.encode()
        topic = self.service.processor.topic_of(role)
        await self.broker.publish(raw, topic, key=key)
        await self.outbox.pump()

    def types(self, role: str) -> list[str]:
        return [parse(role, raw).type for raw in self.seen[role]]

    def messages(self, role: str) -> list[Any]:
        return [parse(role, raw) for raw in self.seen[role]]


@asynccontextmanager
async def wallet(registry: CollectorRegistry | None = None) -> AsyncIterator[Wallet]:
    service = create_app(WalletSettings(), in_memory=True, registry=registry)
    running = Wallet(service, defer_publishing(service))
    record_outputs(service, OBSERVED, running.seen)
    async with TestKafkaBroker(service.broker) as broker:
        running.broker = broker
        yield running
