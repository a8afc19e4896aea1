"""The service's book (``Spec.book_roles``, e.g. the table book): read whole before the service
decides anything, then followed as it grows."""

from __future__ import annotations

import asyncio

import structlog

from holdem.runtime.transport import Follower, TopicPartition
from holdem.runtime.wiring import REPLAY_TIMEOUT_S, Wiring, stop_reading

log = structlog.get_logger(__name__)


class BookTail:
    """Keeps a service's book (``Spec.book_roles``, e.g. the table book) current: every
    partition of those topics read, group-less, from the beginning and then as they grow,
    folded under the processor's lock (the fold is idempotent, so what a replay or the
    service's own publishing already folded changes nothing)."""

    def __init__(self, wiring: Wiring):
        self.wiring = wiring
        self.topics = list(wiring.book_topics)
        self.consumer: Follower | None = None
        self._task: asyncio.Task[None] | None = None

    async def replay(self) -> int:
        """Fold every committed record of the book's topics up to their current end."""
        if not self.topics:
            return 0
        count = await self.wiring.transport.replay(
            self.topics,
            range(self.wiring.settings.partitions),
            self.wiring.fold_book,
            timeout_s=REPLAY_TIMEOUT_S,
        )
        self.check()
        return count

    def check(self) -> None:
        """The service's ``check_book`` on the book as it now is; what it raises is fatal."""
        check = self.wiring.check_book
        if check is None:
            return
        try:
            check()
        except Exception as error:
            self.wiring.fatal(error)
            raise

    async def start(self) -> None:
        """The book read to its end before the service decides anything, then followed."""
        if not self.topics:
            return
        async with self.wiring.lock:
            await self.replay()
        partitions = range(self.wiring.settings.partitions)
        self.consumer = self.wiring.transport.follower(
            [TopicPartition(t, p) for t in self.topics for p in partitions]
        )
        await self.consumer.start()
        self._task = asyncio.create_task(self._follow(), name="book-tail")

    async def _follow(self) -> None:
        assert self.consumer is not None
        try:
            while True:
                batch = await self.consumer.getmany(timeout_ms=200)
                async with self.wiring.lock:
                    for tp, records in batch.items():
                        for record in records:
                            if record.value is not None:
                                self.wiring.fold_book(
                                    tp.topic, record.value, record.key, tp.partition, ()
                                )
                    if batch:
                        self.check()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a book that stops following would decide on stale terms
            log.exception("book tail failed")
            self.wiring.fatal(error)

    async def stop(self) -> None:
        await stop_reading(self._task, self.consumer)
