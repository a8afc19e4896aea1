"""Build a service's faststream app around a Spec: subscriber, replay on assignment, outbox,
metrics endpoint and periodic ticks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, NoReturn

import structlog
from aiokafka import ConsumerRebalanceListener, TopicPartition
from faststream import AckPolicy, FastStream
from faststream.kafka import KafkaBroker
from faststream.kafka.annotations import KafkaMessage
from faststream.kafka.prometheus import KafkaPrometheusMiddleware
from faststream.specification import AsyncAPI
from prometheus_client import CollectorRegistry, start_http_server

from holdem.core.contracts import UNIONS
from holdem.runtime.metrics import Metrics
from holdem.runtime.outbox import BrokerOutbox, FatalError, Outbox, TransactionalOutbox
from holdem.runtime.processor import Processor, Spec
from holdem.runtime.replay import replay
from holdem.runtime.security import faststream_security
from holdem.runtime.settings import RuntimeSettings
from holdem.runtime.topics import ensure_topics

log = structlog.get_logger(__name__)
FETCH_MAX_WAIT_MS = 50
EXIT_FATAL = 70  # EX_SOFTWARE: the supervisor restarts the service


@dataclass
class ServiceApp:
    """A built service: the faststream app to run, its broker, and its processor (state)."""

    app: FastStream
    broker: KafkaBroker
    processor: Processor[Any]


class ReplayOnAssign(ConsumerRebalanceListener):  # type: ignore[misc]
    """Rebuild the state of exactly the assigned partitions before their records are handled."""

    def __init__(self, processor: Processor[Any], settings: RuntimeSettings) -> None:
        self.processor = processor
        self.settings = settings
        self.ready = False  # state rebuilt for the current assignment

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        # Another instance may own these partitions next: forget their rounds so no tick acts
        # on them; the next assignment rebuilds what is ours.
        self.ready = False
        self.processor.metrics.lag.clear()  # no stale lag for partitions we may not own again
        async with self.processor.lock:
            self.processor.reset()

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        partitions = sorted({tp.partition for tp in assigned})
        spec = self.processor.spec
        topics = [self.processor.topic_of(role) for role in spec.state_roles]
        async with self.processor.lock:
            started = time.perf_counter()
            self.processor.reset()
            count = await replay(self.settings.connection, topics, partitions, self.processor.fold)
            seconds = time.perf_counter() - started
        self.ready = True
        self.processor.metrics.replay_duration.labels(spec.name).observe(seconds)
        self.processor.metrics.replay_events.labels(spec.name).inc(count)
        log.info("replayed", partitions=partitions, events=count, seconds=round(seconds, 3))


def build_app(
    spec: Spec[Any],
    settings: RuntimeSettings,
    *,
    in_memory: bool = False,
    registry: CollectorRegistry | None = None,
) -> ServiceApp:
    """The service's app. ``in_memory=True`` is for faststream's TestKafkaBroker: events go
    through the broker, and nothing at startup touches Kafka."""
    registry = registry if registry is not None else CollectorRegistry()
    scope = f"{settings.topic_prefix}." if settings.topic_prefix else ""
    connection = settings.connection
    broker = KafkaBroker(
        connection.bootstrap.split(","),  # faststream takes a str as one host, not a list
        security=faststream_security(connection),
        # Topics are admin's to create; the start-up check (ensure_topics) verifies ours exist.
        allow_auto_create_topics=False,
        client_id=f"holdem-{spec.name}",
        middlewares=[KafkaPrometheusMiddleware(registry=registry, app_name=f"holdem-{spec.name}")],
    )
    topics = settings.topics
    outbox: Outbox = (
        BrokerOutbox(broker)
        if in_memory
        else TransactionalOutbox(
            connection,
            f"{scope}holdem-{spec.name}-{settings.instance_id}",
            settings.publish_retries,
        )
    )
    processor: Processor[Any] = Processor(
        spec,
        topics,
        outbox,
        Metrics(registry),
        partitions=None if in_memory else settings.partitions,
    )
    listener = ReplayOnAssign(processor, settings)
    subscriber = broker.subscriber(
        *(getattr(topics, role) for role in spec.inputs),
        group_id=f"{scope}holdem-{spec.name}",
        # Static membership: a restarted instance takes its partitions straight back instead of
        # waiting for the broker to time the dead member out (about 10 s per restart).
        # handle() never raises for anything a record did (a bad one is dead-lettered), and a
        # FatalError ends the process: no record is ever redelivered in a loop (ACK, not NACK).
        group_instance_id=f"{scope}holdem-{spec.name}-{settings.instance_id}",
        auto_offset_reset="earliest",
        isolation_level="read_committed",
        # A read_committed fetch is not answered when a transaction commits, only when
        # fetch_max_wait_ms runs out (default 500): with a transaction at every hop of a round
        # that idle wait was most of a round's latency.
        fetch_max_wait_ms=FETCH_MAX_WAIT_MS,
        ack_policy=AckPolicy.ACK,
        listener=None if in_memory else listener,
        title=f"holdem-{spec.name}",
        description="consumes the roles "
        + ", ".join(spec.inputs)
        + "; payloads are the unions published on those topics (see the other channels)",
    )

    for role in (*spec.outputs, "rejected"):
        broker.publisher(
            getattr(topics, role),
            schema=UNIONS[role],
            title=f"holdem-{spec.name}:{role}",
            description=f"what {spec.name} publishes on the {role} topic, keyed by player_id",
        )

    @subscriber
    async def on_record(message: KafkaMessage) -> None:
        record = message.raw_message
        assert not isinstance(record, tuple)  # one record per call: the subscriber is not batch
        try:
            await processor.handle(
                record.topic, record.partition, record.offset, message.body, record.key
            )
        except FatalError as error:
            exit_fatally(spec.name, error)

    app = FastStream(
        broker,
        specification=AsyncAPI(title=f"holdem-{spec.name}", version="1.0.0"),
    )
    if not in_memory:
        _add_lifecycle(app, processor, settings, subscriber, registry, listener)
    return ServiceApp(app, broker, processor)


def _add_lifecycle(
    app: FastStream,
    processor: Processor[Any],
    settings: RuntimeSettings,
    subscriber: Any,
    registry: CollectorRegistry,
    listener: ReplayOnAssign,
) -> None:
    tasks: list[asyncio.Task[None]] = []

    @app.on_startup
    async def start() -> None:
        # Only the topics it uses: a service principal may not even see the others (ACLs).
        spec = processor.spec
        roles = {*spec.inputs, *spec.state_roles, *spec.outputs, "rejected"}
        names = sorted(getattr(settings.topics, role) for role in roles)
        await ensure_topics(settings.connection, names, settings.partitions)
        await processor.outbox.start()
        if settings.metrics_port:
            start_http_server(settings.metrics_port, registry=registry)

    async def tick() -> None:
        # Timeouts are judged only once the backlog is read: after downtime, a player's Call
        # may still be waiting in it.
        if listener.ready and await _caught_up(subscriber):
            await processor.run_tick()

    @app.after_startup
    async def start_loops() -> None:
        tasks.append(asyncio.create_task(_every(processor.spec.tick_interval_s, tick)))
        tasks.append(asyncio.create_task(_every(5.0, lambda: _measure_lag(processor, subscriber))))

    @app.on_shutdown
    async def stop() -> None:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await processor.outbox.stop()


async def _every(seconds: float, action: Any) -> None:
    while True:
        await asyncio.sleep(seconds)
        try:
            await action()
        except asyncio.CancelledError:
            raise
        except Exception:  # a failed tick is logged; the next one tries again
            log.exception("periodic task failed")


async def _caught_up(subscriber: Any) -> bool:
    consumer = getattr(subscriber, "consumer", None)
    if consumer is None or not consumer.assignment():
        return False
    for tp in consumer.assignment():
        high = consumer.highwater(tp)
        if high is None or await consumer.position(tp) < high:
            return False
    return True


async def _measure_lag(processor: Processor[Any], subscriber: Any) -> None:
    consumer = getattr(subscriber, "consumer", None)
    if consumer is None:
        return
    for tp in consumer.assignment():
        high = consumer.highwater(tp)
        if high is None:
            continue
        position = await consumer.position(tp)
        processor.metrics.lag.labels(processor.spec.name, tp.topic, str(tp.partition)).set(
            max(high - position, 0)
        )


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
