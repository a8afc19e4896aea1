"""What every job of a service's loop is handed (ADR 035): the service's name and topics, its
partition store, its lock, outbox, metrics and transport, and the processor's steps the jobs
call. Built once by the loop from the processor, so that no job (rebuild, checkpoint, watches,
book) imports the processor or the loop."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from holdem.runtime.metrics import Metrics
from holdem.runtime.outbox import TransactionalOutbox
from holdem.runtime.partitions import PartitionStore
from holdem.runtime.settings import RuntimeSettings
from holdem.runtime.transport import Apply, Follower, GroupConsumer, Transport, Wanted

REPLAY_TIMEOUT_S = 120.0  # without progress: a long log is read to its end

Fatal = Callable[[BaseException], Any]


class Forget(Protocol):
    def __call__(self, partitions: Iterable[int] | None = None) -> None: ...


@dataclass
class Wiring:
    name: str  # the service's (Spec.name)
    settings: RuntimeSettings
    transport: Transport
    outbox: TransactionalOutbox
    metrics: Metrics
    lock: asyncio.Lock  # the processor's: one batch, tick, rebuild or book fold at a time
    store: PartitionStore[Any]
    fatal: Fatal  # ends the process (status 70) for its supervisor; a test records it instead
    # The processor's reset: the state of the partitions given (default: every one) and what
    # it keeps beside.
    forget: Forget
    inputs: tuple[str, ...]  # topic names consumed
    state_topics: tuple[str, ...]  # topic names folded into the partitions' states
    book_topics: tuple[str, ...]  # topic names read whole into the book
    snapshot_topic: str
    fold: Apply  # the replay path of one committed record
    fold_book: Apply
    wants: Wanted  # a record of this type is parsed, not skipped
    check_book: Callable[[], None] | None


async def stop_reading(
    task: asyncio.Task[None] | None, consumer: GroupConsumer | Follower | None
) -> None:
    """Cancel a reading task, then stop its consumer."""
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    if consumer is not None:
        await consumer.stop()
