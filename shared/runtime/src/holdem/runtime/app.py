"""Build a service's app around a Spec: the batch loop (holdem.runtime.loop) over a transport
(Kafka unless a test passes the in-memory one), its outbox, the metrics endpoint and periodic
ticks, started and stopped by plain asyncio (``run``: until SIGINT or SIGTERM). The AsyncAPI
documents of its channels are generated at build time (``holdem.runtime.asyncapi``, ADR 023)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

import structlog
from prometheus_client import CollectorRegistry, start_http_server

from holdem.core import heap
from holdem.core.wire.topics import snapshot_topic
from holdem.runtime.kafka import KafkaTransport, unreachable
from holdem.runtime.loop import ServiceLoop
from holdem.runtime.metrics import Metrics
from holdem.runtime.outbox import FatalError, TransactionalOutbox
from holdem.runtime.processor import Processor, Spec
from holdem.runtime.settings import RuntimeSettings
from holdem.runtime.stopping import StopWatch
from holdem.runtime.transport import Transport
from holdem.runtime.twins import TwinWatch
from holdem.runtime.watches import LAG_PERIOD_S

log = structlog.get_logger(__name__)
EXIT_FATAL = 70  # EX_SOFTWARE: the supervisor restarts the service
# A graceful stop (SIGTERM) ends within this, well below the launcher's grace before its SIGKILL
# (holdem.ops.launcher.STOP_TIMEOUT_S, 15 s): past it, the process names what hangs and exits 70.
STOP_BOUND_S = 10.0
# Each phase's share, 9 s in all: a phase cut short leaves the bound for the ones after it.
PHASE_S = 1.0  # cancelling tasks, closing the book's follower or the twin watch's admin client
CLIENT_STOP_S = 2.5  # the consumer's (LeaveGroup) and the producer's (flush) share


class BrokerUnreachableError(RuntimeError):
    """The start could not reach the broker: status 70, for the supervisor to try again."""


@dataclass
class ServiceApp:
    """A built service: its loop, its processor (state) and what starts and stops them."""

    loop: ServiceLoop
    processor: Processor[Any]
    settings: RuntimeSettings
    transport: Transport
    registry: CollectorRegistry
    twins: TwinWatch
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)
    stop_bound_s: float = STOP_BOUND_S
    hung: Callable[[], object] = field(default=lambda: _exit_now())
    # In a service's process (``run``): the bound covers what asyncio.run does after the stop
    # too (it cancels and awaits every task left, and joins its executor's threads).
    until_exit: bool = False

    async def start(self) -> None:
        """Check its topics, start the producer, the metrics endpoint, the loop and the
        periodic tasks (ticks, lag, the twin watch)."""
        spec, settings = self.processor.spec, self.settings
        # Only the topics it uses: a service principal may not even see the others (ACLs).
        roles = {*spec.inputs, *spec.state_roles, *spec.book_roles, *spec.outputs, "rejected"}
        names = sorted(getattr(settings.topics, role) for role in roles)
        if spec.snapshot is not None:
            names.append(snapshot_topic(settings.topics, spec.name))
        await self.transport.ensure_topics(names, settings.partitions)
        # No start waits on the group's listing (ADR 034): a twin's producer init fences this
        # one or this one's fences it, and the twin watch (below) reports a twin that stays.
        await self.processor.outbox.start()
        if settings.metrics_port:
            start_http_server(settings.metrics_port, settings.metrics_host, registry=self.registry)
        # Every log line of the loop's tasks (created below, in this context) names the tenant,
        # which is the operator the deployment serves (ADR 021).
        structlog.contextvars.bind_contextvars(tenant=settings.tenant, operator=settings.operator)
        await self.loop.start()
        self.tasks.append(asyncio.create_task(_every(spec.tick_interval_s, self._tick)))
        self.tasks.append(asyncio.create_task(_every(LAG_PERIOD_S, self.loop.watches.measure_lag)))
        # The stall watch: a process up but deciding nothing exits for its supervisor.
        watches = self.loop.watches
        self.tasks.append(asyncio.create_task(_every(watches.period_s, watches.watch)))
        self.tasks.append(asyncio.create_task(_every(settings.twin_check_s, self.twins.check)))

    async def _tick(self) -> None:
        # Timeouts are judged only once the backlog is read: after downtime, a player's Call
        # may still be waiting in it.
        if await self.loop.watches.caught_up():
            await self.processor.run_tick(self.loop.group.resumed_at)

    async def stop(self) -> None:
        """Stop the periodic tasks, then the loop (its last batch committed), its consumer (it
        leaves the group), the book, then the producer and the twin watch's admin client.

        Each phase is logged with its seconds; one that outlasts its share is cut short (a
        warning naming what it still awaits) and the next one starts. The whole stop is bounded
        by ``STOP_BOUND_S``, below the launcher's grace: past it, one critical line names the
        phase and every task still running, with its stack, and the process exits 70 (a stop
        that hangs is a bug to see, never a SIGKILL with nothing in the log)."""
        name = self.processor.spec.name
        with StopWatch(name, self.stop_bound_s, self.hung, until_exit=self.until_exit) as watch:
            await watch.phase("tasks", self._stop_tasks(), PHASE_S)
            await watch.phase("loop", self.loop.stop_task(), PHASE_S)
            await watch.phase("consumer", self.loop.stop_consumer(), CLIENT_STOP_S)
            await watch.phase("book", self.loop.book.stop(), PHASE_S)
            await watch.phase("producer", self.processor.outbox.stop(), CLIENT_STOP_S)
            await watch.phase("twins", self.twins.close(), PHASE_S)

    async def _stop_tasks(self) -> None:
        tasks, self.tasks = self.tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def exit(self) -> None:
        """Ask ``serve`` to stop the service (a signal, or a fatal condition seen by a hook)."""
        self.stopping.set()

    async def serve(self) -> None:
        """Start, run until ``exit`` (SIGINT, SIGTERM), stop."""
        loop = asyncio.get_running_loop()
        signals = (signal.SIGINT, signal.SIGTERM)
        for sig in signals:
            loop.add_signal_handler(sig, self.exit)
        try:
            try:
                await self.start()
            except Exception as error:
                # A broker away at start is an outage like one later: status 70 (restart), not
                # 1, which a supervisor may take for a configuration to fix (issue 26).
                if unreachable(error):
                    name = self.processor.spec.name
                    exit_fatally(name, BrokerUnreachableError(f"at start: {error!r}"))
                raise
            try:
                await self.stopping.wait()
            finally:
                await self.stop()
        finally:
            for sig in signals:
                loop.remove_signal_handler(sig)


def build_app(
    spec: Spec[Any],
    settings: RuntimeSettings,
    *,
    transport: Transport | None = None,
    registry: CollectorRegistry | None = None,
) -> ServiceApp:
    """The service's app, on Kafka (``settings.connection``) unless given another transport
    (``holdem.runtime.memory.MemoryTransport`` in tests). Nothing connects before it starts."""
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
    duplicate = processor.metrics.duplicate_instance.labels(spec.name)
    duplicate.set(0)
    twins = TwinWatch(
        transport.admin(),
        loop.group_id,
        loop.client_id,
        lambda: loop.group.membership().member_id,
        lambda twin: duplicate.set(float(twin)),
        settings.session_timeout_ms / 1000,
    )
    return ServiceApp(loop, processor, settings, transport, registry, twins)


async def _every(seconds: float, action: Callable[[], Awaitable[object]]) -> None:
    task = asyncio.current_task()
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
        # A cancel the action lost (a library that turned it into an error, or returned past
        # it: CPython 3.11's wait_for, gh-86296) must still end the task, or the stop that
        # cancelled it would wait for ever.
        if task is not None and task.cancelling():
            raise asyncio.CancelledError


def _exit_now() -> NoReturn:
    logging.shutdown()
    os._exit(EXIT_FATAL)


def exit_fatally(service: str, error: BaseException) -> NoReturn:
    """End the process now, non-zero, for its supervisor to restart: a service that cannot
    publish must not stay up consuming (nothing it decides could be committed)."""
    log.critical("fatal: exiting", service=service, error=repr(error))
    logging.shutdown()
    os._exit(EXIT_FATAL)


def run(service: ServiceApp) -> None:
    """Run until SIGINT/SIGTERM; from the signal to the process's end within ``STOP_BOUND_S``
    (and a second), or status 70."""
    service.until_exit = True
    heap.tune()  # everything built to here is frozen; the loop allocates per record (ADR 045)
    asyncio.run(service.serve())


@contextlib.asynccontextmanager
async def running(service: ServiceApp) -> AsyncIterator[ServiceApp]:
    """Start the app in this event loop (tests, the demo) and stop it on exit."""
    await service.start()
    try:
        yield service
    finally:
        await service.stop()
