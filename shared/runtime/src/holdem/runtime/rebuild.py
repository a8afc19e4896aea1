"""The state of exactly the assigned partitions, rebuilt before any of their records is decided:
the rebalance listener (``Rebuild``) and the rebuild itself (``Rebuilder``: each partition from
its latest snapshot, if any, plus the log's tail, then the whole book again).

A partition this instance held before a rebalance and is assigned again keeps its state if
nobody else moved it meanwhile (ADR 043): the group's committed offsets of its input partitions
are those of the revoke, and its other state topics (a ledger, a vault) have nothing after the
ends read at the revoke. Anything else, or anything that cannot be read, rebuilds it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import UTC, datetime
from typing import Any

import structlog

from holdem.runtime.book import BookTail
from holdem.runtime.member import GroupMember, Kept
from holdem.runtime.transport import TopicPartition
from holdem.runtime.wiring import REPLAY_TIMEOUT_S, Wiring

log = structlog.get_logger(__name__)
# The offsets and ends a revoke reads to set states aside: a broker that does not answer within
# this costs the kept states (a full rebuild), never the rebalance.
KEEP_READ_TIMEOUT_S = 5.0
# A replay start past any offset: a kept partition's input topics are not read again (the loop
# consumes them from the committed offsets, as it did before the rebalance).
NOT_READ = 2**62


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
            group = self.group
            # A valid state is set aside (out of the store: no tick decides on it meanwhile);
            # one that is not (not rebuilt yet, or the member already evicted) is not, and what
            # an earlier revoke set aside is dropped: it can only be taken back by the very next
            # generation (ADR 043).
            valid = group.ready and group.pending is None and group.still_of_rebuilt_generation()
            group.ready = False
            group.pending = None
            group.kept = {}
            self.wiring.metrics.lag.clear()
            if valid:
                group.kept = await self._set_aside({tp.partition for tp in revoked})
            self.wiring.forget()

    async def _set_aside(self, held: set[int]) -> dict[int, Kept]:
        """The states of ``held`` with the group's committed offsets of their inputs and the
        last stable offsets of their other state topics, as they are now (this instance still
        owns them: nobody else commits for them); nothing if the broker does not answer."""
        wiring, consumer = self.wiring, self.group.consumer
        # A held partition with no state object yet has the initial state: it is kept too.
        parts = {n: wiring.store.partition(n) for n in sorted(held)}
        if consumer is None or not parts:
            return {}
        inputs = [TopicPartition(t, p) for p in sorted(parts) for t in wiring.inputs]
        others = [
            TopicPartition(t, p)
            for p in sorted(parts)
            for t in wiring.state_topics
            if t not in wiring.inputs
        ]
        try:
            async with asyncio.timeout(KEEP_READ_TIMEOUT_S):
                committed = await consumer.committed(inputs)
                ends = await consumer.end_offsets(others) if others else {}
        except Exception as error:  # whatever it was, the next assignment rebuilds them all
            log.warning("states not kept: offsets unreadable at the revoke", error=repr(error))
            return {}
        generation = self.group.generation
        if generation is None:
            return {}
        return {
            n: Kept(
                part,
                generation,
                {tp: committed[tp] for tp in inputs if tp.partition == n},
                {
                    TopicPartition(tp.topic, tp.partition): ends[tp]
                    for tp in others
                    if tp.partition == n
                },
            )
            for n, part in parts.items()
        }

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
        kept = await self._still_valid(partitions)
        for number, held in kept.items():
            wiring.store.parts[number] = held.part
        rebuilt = [p for p in partitions if p not in kept]
        starts, loaded = await self._load_snapshots(rebuilt)
        snapshot_s = time.perf_counter() - started
        moved: set[int] = set()

        def fold(topic: str, raw: bytes, key: bytes | None, partition: int, headers: Any) -> None:
            if partition in kept:  # written after the revoke by someone else: not kept
                moved.add(partition)
            else:
                wiring.fold(topic, raw, key, partition, headers)

        # A kept partition's other state topics are read from the ends of the revoke: a record
        # there means someone else wrote it. The replay also waits for any transaction open on
        # them (a zombie's) to end first, as a rebuild does.
        checked = [p for p in kept if kept[p].ends]
        for p in checked:
            starts.update(kept[p].ends)
            starts.update(
                {TopicPartition(t, p): NOT_READ for t in wiring.state_topics if t in inputs}
            )
        count = await self._replay(sorted([*rebuilt, *checked]), fold, starts, wanted)
        if moved:
            log.warning("kept states moved meanwhile: rebuilt", partitions=sorted(moved))
            wiring.forget(sorted(moved))
            for p in moved:
                del kept[p]
            again, loaded_again = await self._load_snapshots(sorted(moved))
            loaded = sorted({*loaded, *loaded_again})
            count += await self._replay(sorted(moved), wiring.fold, again, wanted)
            rebuilt = sorted({*rebuilt, *moved})
        # The whole book again, to its end: the commands of the partitions just assigned are
        # decided against every table event their previous owner committed. A kept partition's
        # previous owner is this instance, whose book tail never stopped: nothing to read again.
        tail_s = time.perf_counter() - started - snapshot_s
        if rebuilt:
            count += await self.book.replay()
        seconds = time.perf_counter() - started
        self.group.ready = True
        self.group.resumed_at = datetime.now(UTC)
        self.group.progress_at = time.monotonic()
        wiring.metrics.replay_duration.labels(wiring.name).observe(seconds)
        wiring.metrics.replay_events.labels(wiring.name).inc(count)
        log.info(
            "replayed",
            partitions=partitions,  # every assigned one: what it serves now
            rebuilt=rebuilt,  # from their snapshots and the log
            kept=sorted(kept),  # held before the rebalance, nobody moved them: kept as they were
            snapshots=loaded,
            events=count,
            seconds=round(seconds, 3),
            # Where the time went: the latest snapshots read and decoded, the log's tail after
            # them folded, the whole book read again.
            snapshot_s=round(snapshot_s, 3),
            tail_s=round(tail_s, 3),
            book_s=round(seconds - snapshot_s - tail_s, 3),
        )

    async def _replay(
        self,
        partitions: list[int],
        fold: Any,
        starts: dict[TopicPartition, int],
        wanted: Any,
    ) -> int:
        if not partitions:
            return 0
        wiring = self.wiring
        return await wiring.transport.replay(
            wiring.state_topics,
            partitions,
            fold,
            starts=starts,
            timeout_s=REPLAY_TIMEOUT_S,
            wanted=wanted,
            stuck=wiring.outbox.renew,
        )

    async def _still_valid(self, partitions: list[int]) -> dict[int, Kept]:
        """What the last revoke set aside, of ``partitions``, whose input partitions' committed
        offsets are still those of the revoke (nobody else committed a batch of them); the rest
        is dropped. The committed offsets are stable ones: a transaction still holding newer
        ones open (a dead owner's) is waited for, and then they differ."""
        held, self.group.kept = self.group.kept, {}
        # Only the generation right after the revoke's: this member was in both, so no other
        # member can have been assigned the partition in between (each rebalance adds one). A
        # generation skipped (evicted, rejoined) means another member may have owned it and
        # written records that carry no offsets (a tick's) on its inputs: rebuilt.
        now_generation = self.group.generation
        skipped = {p for p, k in held.items() if now_generation != k.generation + 1}
        if skipped & set(partitions):
            log.info(
                "kept states dropped: not the next generation",
                partitions=sorted(skipped & set(partitions)),
                generation=now_generation,
            )
        candidates = {p: k for p, k in held.items() if p in partitions and p not in skipped}
        consumer = self.group.consumer
        if not candidates or consumer is None:
            return {}
        asked = [tp for k in candidates.values() for tp in k.inputs]
        try:
            async with asyncio.timeout(REPLAY_TIMEOUT_S):
                now = await consumer.committed(asked)
        except Exception as error:  # unreadable: rebuilt, as before ADR 043
            log.warning("kept states dropped: offsets unreadable", error=repr(error))
            return {}
        kept = {}
        for p, k in candidates.items():
            moved = {
                f"{tp.topic}-{tp.partition}": (then, now.get(tp))
                for tp, then in k.inputs.items()
                if now.get(tp) != then
            }
            if moved:
                log.info("kept state dropped: committed offsets moved", partition=p, moved=moved)
            else:
                kept[p] = k
        return kept

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
