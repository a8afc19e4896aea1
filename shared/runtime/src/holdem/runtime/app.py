"""Build a service's app around a Spec: the batch loop (holdem.runtime.loop) over a transport
(Kafka unless a test passes the in-memory one), its outbox, the metrics endpoint and periodic
ticks, in faststream's app lifecycle; the AsyncAPI document of its channels (ADR 023)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, NoReturn

import structlog
from faststream import FastStream
from faststream.kafka import KafkaBroker
from faststream.kafka.annotations import KafkaMessage
from faststream.specification import AsyncAPI
from prometheus_client import CollectorRegistry, start_http_server

from holdem.core.contracts import UNIONS
from holdem.core.wire.topics import snapshot_topic
from holdem.runtime.kafka import KafkaTransport
from holdem.runtime.loop import SESSION_TIMEOUT_MS, ServiceLoop
from holdem.runtime.metrics import Metrics
from holdem.runtime.outbox import FatalError, TransactionalOutbox
from holdem.runtime.processor import Processor, Spec
from holdem.runtime.security import faststream_security
from holdem.runtime.settings import RuntimeSettings
from holdem.runtime.transport import Transport
from holdem.runtime.twins import CHECK_EVERY_S, TwinWatch

log = structlog.get_logger(__name__)
EXIT_FATAL = 70  # EX_SOFTWARE: the supervisor restarts the service


@dataclass
class ServiceApp:
    """A built service: the faststream app to run, its loop and its processor (state)."""

    app: FastStream
    loop: ServiceLoop
    processor: Processor[Any]


class _App(FastStream):
    """faststream's app with no broker to start: the loop is the service's only consumer.
    (faststream 0.6 asserts a broker in ``_start_broker``; ``stop`` already takes none.)"""

    async def _start_broker(self) -> None:
        for broker in self.brokers:
            await broker.start()


def build_app(
    spec: Spec[Any],
    settings: RuntimeSettings,
    *,
    transport: Transport | None = None,
    registry: CollectorRegistry | None = None,
) -> ServiceApp:
    """The service's app, on Kafka (``settings.connection``) unless given another transport
    (``holdem.runtime.testing.MemoryTransport`` in tests). Nothing connects before it starts."""
    registry = registry if registry is not None else CollectorRegistry()
    transport = transport if transport is not None else KafkaTransport(settings.connection)
    scope = f"{settings.topic_prefix}." if settings.topic_prefix else ""
    outbox = TransactionalOutbox(
        transport.producer(
            f"{scope}holdem-{spec.name}-{settings.instance_id}", settings.publish_retries
        )
    )
    processor: Processor[Any] = Processor(
        spec,
        settings.topics,
        outbox,
        Metrics(registry),
        partitions=settings.partitions,
        operator=settings.operator,
    )
    loop = ServiceLoop(processor, outbox, settings, lambda e: exit_fatally(spec.name, e), transport)
    processor.metrics.ready.labels(spec.name).set_function(lambda: float(loop.healthy()))
    processor.metrics.announce_build(spec.name)
    app = _App(specification=describe(spec, settings))
    _add_lifecycle(app, processor, settings, loop, registry, transport)
    return ServiceApp(app, loop, processor)


def describe(spec: Spec[Any], settings: RuntimeSettings) -> AsyncAPI:
    """The AsyncAPI document of the service's channels: what it consumes and publishes. The
    KafkaBroker here only describes them; it is never started, nothing subscribes to it."""
    connection = settings.connection
    broker = KafkaBroker(
        connection.bootstrap.split(","),  # faststream takes a str as one host, not a list
        security=faststream_security(connection),
        client_id=f"holdem-{spec.name}",
    )
    topics = settings.topics
    subscriber = broker.subscriber(
        *(getattr(topics, role) for role in spec.inputs),
        group_id=f"holdem-{spec.name}",
        title=f"holdem-{spec.name}",
        description="consumes the roles "
        + ", ".join(spec.inputs)
        + "; payloads are the unions published on those topics (see the other channels)",
    )
    subscriber(_consumes)
    for role in (*spec.outputs, "rejected"):
        broker.publisher(
            getattr(topics, role),
            schema=UNIONS[role],
            title=f"holdem-{spec.name}:{role}",
            description=f"what {spec.name} publishes on the {role} topic, keyed by "
            + ("table_id" if role == "tables" else "player_id"),
        )
    return AsyncAPI(broker, title=f"holdem-{spec.name}", version="1.0.0")


async def _consumes(message: KafkaMessage) -> None:
    """The described subscriber's handler: never called (the broker is never started)."""


def _add_lifecycle(
    app: FastStream,
    processor: Processor[Any],
    settings: RuntimeSettings,
    loop: ServiceLoop,
    registry: CollectorRegistry,
    transport: Transport,
) -> None:
    tasks: list[asyncio.Task[None]] = []
    duplicate = processor.metrics.duplicate_instance.labels(processor.spec.name)
    duplicate.set(0)
    twins = TwinWatch(
        transport.admin(),
        loop.group_id,
        loop.client_id,
        lambda: loop.consumer.membership().member_id if loop.consumer is not None else None,
        lambda twin: duplicate.set(float(twin)),
        SESSION_TIMEOUT_MS / 1000,
    )

    @app.on_startup
    async def start() -> None:
        # Only the topics it uses: a service principal may not even see the others (ACLs).
        spec = processor.spec
        roles = {*spec.inputs, *spec.state_roles, *spec.book_roles, *spec.outputs, "rejected"}
        names = sorted(getattr(settings.topics, role) for role in roles)
        if spec.snapshot is not None:
            names.append(snapshot_topic(settings.topics, spec.name))
        await transport.ensure_topics(names, settings.partitions)
        # No start waits on the group's listing (ADR 034): a twin's producer init fences this
        # one or this one's fences it, and the twin watch (below) reports a twin that stays.
        await processor.outbox.start()
        if settings.metrics_port:
            start_http_server(settings.metrics_port, settings.metrics_host, registry=registry)

    async def tick() -> None:
        # Timeouts are judged only once the backlog is read: after downtime, a player's Call
        # may still be waiting in it.
        if await loop.caught_up():
            await processor.run_tick(loop.resumed_at)

    @app.after_startup
    async def start_loops() -> None:
        # Every log line of the loop's tasks (created below, in this context) names the tenant,
        # which is the operator the deployment serves (ADR 021).
        structlog.contextvars.bind_contextvars(tenant=settings.tenant, operator=settings.operator)
        await loop.start()
        tasks.append(asyncio.create_task(_every(processor.spec.tick_interval_s, tick)))
        tasks.append(asyncio.create_task(_every(5.0, loop.measure_lag)))
        tasks.append(asyncio.create_task(_every(CHECK_EVERY_S, twins.check)))

    @app.on_shutdown
    async def stop() -> None:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await loop.stop()
        await processor.outbox.stop()
        await twins.close()


async def _every(seconds: float, action: Any) -> None:
    while True:
        await asyncio.sleep(seconds)
        try:
            await action()
        except asyncio.CancelledError:
            raise
        except FatalError as error:
            exit_fatally("tick", error)
        except Exception:  # a failed tick is logged; the next one tries again
            log.exception("periodic task failed")


def exit_fatally(service: str, error: BaseException) -> NoReturn:
    """End the process now, non-zero, for its supervisor to restart: a service that cannot
    publish must not stay up consuming (nothing it decides could be committed)."""
    log.critical("fatal: exiting", service=service, error=repr(error))
    logging.shutdown()
    os._exit(EXIT_FATAL)


def run(service: ServiceApp) -> None:
    """Run until SIGINT/SIGTERM."""
    asyncio.run(service.app.run())


@contextlib.asynccontextmanager
async def running(service: ServiceApp) -> AsyncIterator[ServiceApp]:
    """Start the app in this event loop (tests, the demo) and stop it on exit."""
    await service.app.start()
    try:
        yield service
    finally:
        await service.app.stop()
