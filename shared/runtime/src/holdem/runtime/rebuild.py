"""The state of exactly the assigned partitions, rebuilt before any of their records is decided:
the rebalance listener (``Rebuild``) and the rebuild itself (``Rebuilder``: each partition from
its latest snapshot, if any, plus the log's tail, then the whole book again)."""

from __future__ import annotations

import contextlib
import time
from datetime import UTC, datetime
from typing import Any

import structlog

from holdem.runtime.book import BookTail
from holdem.runtime.member import GroupMember
from holdem.runtime.transport import TopicPartition
from holdem.runtime.wiring import REPLAY_TIMEOUT_S, Wiring

log = structlog.get_logger(__name__)


class SplitAssignmentError(RuntimeError):
    """An assignment that gives this instance a partition of one input topic and not the same
    partition of the others: its state would miss the other owner's records."""


class Rebuild:
    """Have the state of exactly the assigned partitions rebuilt before any of their records is
    decided; a revoke waits for the batch in flight to commit, then forgets the state. The
    rebuild itself runs in the loop's task, not here: aiokafka sends no heartbeat while this
    callback runs, and a rebuild longer than the session timeout got the member evicted."""

    def __init__(self, wiring: Wiring, group: GroupMember) -> None:
        self.wiring = wiring
        self.group = group

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        async with self.wiring.lock:  # the batch in flight commits first
            self.group.ready = False
            self.group.pending = None
            self.wiring.metrics.lag.clear()
            self.wiring.forget()

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        # aiokafka only logs what a listener raises and goes on with the assignment: a state
        # that could not be rebuilt must end the process instead of being decided against.
        try:
            partitions = sorted({tp.partition for tp in assigned})
            whole = {TopicPartition(t, p) for t in self.wiring.inputs for p in partitions}
            if set(assigned) != whole:
                raise SplitAssignmentError(
                    f"assigned {sorted(assigned)}, not every input topic of partitions {partitions}"
                )
            self.group.generation = self.group.current_generation()
            self.group.pending = partitions  # rebuilt by the loop before its next batch
        except Exception as error:
            self.wiring.fatal(error)


class Rebuilder:
    """Rebuilds the partitions an assignment gave (the caller holds the lock)."""

    def __init__(self, wiring: Wiring, group: GroupMember, book: BookTail) -> None:
        self.wiring = wiring
        self.group = group
        self.book = book

    async def rebuild(self, partitions: list[int]) -> None:
        """Each assigned partition from its latest snapshot (if any) plus the log's tail (the
        caller holds the processor's lock)."""
        with self._rebuilding():
            await self._rebuild(partitions)

    def _rebuilding(self) -> contextlib.AbstractContextManager[Any]:
        """The member is busy, not idle, while it rebuilds: without this aiokafka leaves the
        group once a replay outlasts max_poll_interval (5 min: a cold start on a million
        rounds), the rejoin assigns the partitions again, and the rebuild starts over for ever
        (seen in the restart bench). Its poll clock is the one a fetch holds still."""
        consumer = self.group.consumer
        return consumer.busy() if consumer is not None else contextlib.nullcontext()

    async def _rebuild(self, partitions: list[int]) -> None:
        wiring = self.wiring
        inputs = set(wiring.inputs)

        def wanted(topic: str, kind: bytes | None) -> bool:
            # What it skips unparsed when it consumes a topic, it skips when it replays it
            # too; a topic only it writes (its ledger, its vault) is folded whole.
            return topic not in inputs or wiring.wants(topic, kind)

        started = time.perf_counter()
        wiring.forget()
        starts, loaded = await self._load_snapshots(partitions)
        snapshot_s = time.perf_counter() - started
        count = await wiring.transport.replay(
            wiring.state_topics,
            partitions,
            wiring.fold,
            starts=starts,
            timeout_s=REPLAY_TIMEOUT_S,
            wanted=wanted,
            stuck=wiring.outbox.renew,
        )
        # The whole book again, to its end: the commands of the partitions just assigned are
        # decided against every table event their previous owner committed.
        tail_s = time.perf_counter() - started - snapshot_s
        count += await self.book.replay()
        seconds = time.perf_counter() - started
        self.group.ready = True
        self.group.resumed_at = datetime.now(UTC)
        self.group.progress_at = time.monotonic()
        wiring.metrics.replay_duration.labels(wiring.name).observe(seconds)
        wiring.metrics.replay_events.labels(wiring.name).inc(count)
        log.info(
            "replayed",
            partitions=partitions,
            snapshots=loaded,
            events=count,
            seconds=round(seconds, 3),
            # Where the time went: the latest snapshots read and decoded, the log's tail after
            # them folded, the whole book read again.
            snapshot_s=round(snapshot_s, 3),
            tail_s=round(tail_s, 3),
            book_s=round(seconds - snapshot_s - tail_s, 3),
        )

    async def _load_snapshots(
        self, partitions: list[int]
    ) -> tuple[dict[TopicPartition, int], list[int]]:
        """States from the latest snapshots; the offsets their replays start from."""
        wiring = self.wiring
        if wiring.store.codec is None or wiring.settings.snapshot_interval_s <= 0:
            return {}, []
        found = await wiring.transport.latest_snapshots(wiring.snapshot_topic, partitions)
        starts: dict[TopicPartition, int] = {}
        for partition, raw in sorted(found.items()):
            try:
                snapshot = wiring.store.load(raw, wiring.name, partition)
            except ValueError as error:  # the log is still whole: rebuild from its beginning
                log.error("snapshot unusable, full replay", partition=partition, error=repr(error))
                wiring.metrics.snapshot_failures.labels(wiring.name).inc()
                continue
            starts.update(snapshot.starts())
        return starts, sorted({tp.partition for tp in starts})
