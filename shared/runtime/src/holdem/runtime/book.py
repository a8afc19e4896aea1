"""The service's book (``Spec.book_roles``, e.g. the table book): read whole before the service
decides anything, then followed as it grows (moved out of ``holdem.runtime.loop``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import structlog

from holdem.runtime.processor import Processor
from holdem.runtime.settings import RuntimeSettings
from holdem.runtime.transport import Follower, GroupConsumer, TopicPartition, Transport

log = structlog.get_logger(__name__)
REPLAY_TIMEOUT_S = 120.0  # without progress: a long log is read to its end

Fatal = Callable[[BaseException], Any]


class BookTail:
    """Keeps a service's book (``Spec.book_roles``, e.g. the table book) current: every
    partition of those topics read, group-less, from the beginning and then as they grow,
    folded under the processor's lock (the fold is idempotent, so what a replay or the
    service's own publishing already folded changes nothing)."""

    def __init__(
        self,
        processor: Processor[Any],
        settings: RuntimeSettings,
        fatal: Fatal,
        transport: Transport,
    ):
        self.processor = processor
        self.settings = settings
        self.fatal = fatal
        self.transport = transport
        self.topics = [processor.topic_of(role) for role in processor.spec.book_roles]
        self.consumer: Follower | None = None
        self._task: asyncio.Task[None] | None = None

    async def replay(self) -> int:
        """Fold every committed record of the book's topics up to their current end."""
        if not self.topics:
            return 0
        count = await self.transport.replay(
            self.topics,
            range(self.settings.partitions),
            self.processor.fold_book,
            timeout_s=REPLAY_TIMEOUT_S,
        )
        self.check()
        return count

    def check(self) -> None:
        """The service's ``check_book`` on the book as it now is; what it raises is fatal."""
        check = self.processor.spec.check_book
        if check is None:
            return
        try:
            check()
        except Exception as error:
            self.fatal(error)
            raise

    async def start(self) -> None:
        """The book read to its end before the service decides anything, then followed."""
        if not self.topics:
            return
        async with self.processor.lock:
            await self.replay()
        self.consumer = self.transport.follower(
            [TopicPartition(t, p) for t in self.topics for p in range(self.settings.partitions)]
        )
        await self.consumer.start()
        self._task = asyncio.create_task(self._follow(), name="book-tail")

    async def _follow(self) -> None:
        assert self.consumer is not None
        try:
            while True:
                batch = await self.consumer.getmany(timeout_ms=200)
                async with self.processor.lock:
                    for tp, records in batch.items():
                        for record in records:
                            if record.value is not None:
                                self.processor.fold_book(
                                    tp.topic, record.value, record.key, tp.partition
                                )
                    if batch:
                        self.check()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a book that stops following would decide on stale terms
            log.exception("book tail failed")
            self.fatal(error)

    async def stop(self) -> None:
        await stop_reading(self._task, self.consumer)


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
