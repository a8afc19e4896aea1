"""An in-memory transport (``holdem.runtime.transport``) for tests: a log of topics and
partitions in this process, so a test runs the service's own ``ServiceLoop`` with the batches and
transactions it runs on Kafka.

- **Transactions are atomic**: a producer's records, snapshot records and the group's offsets are
  appended and committed together, or (fenced, refused) not at all; readers see whole
  transactions only (read_committed). A producer started with a transactional id fences the one
  started before it; offsets sent as a member the group no longer knows are refused (KIP-447).
- **Consumer groups**: a member joining or leaving rebalances the group (every member's
  listener is told of its revoke, then of its assignment, under a new generation); one member,
  the oldest, gets every partition of the subscription, the others none. An assignment starts
  from the group's committed offsets (else the beginning). A fetch returns at most
  ``max_records`` records, in the order they were written: a batch ends where the next record
  is of a partition the batch already holds but did not read last (a batch is decided partition
  by partition, and write order must survive that). Kafka's fetcher groups by partition instead.
- **Replay and snapshots** read the log: each partition number's topics merged in write order,
  the latest snapshot from a partition's last records, as on Kafka.

``settle()`` waits until every member has read and committed everything of its assignment and
every follower is at the end; ``records(topic)``, ``values(topic)``: what was committed there.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
import uuid
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from holdem.core.wire.partitioning import partition_for_key
from holdem.runtime.outbox import FatalError, fenced
from holdem.runtime.snapshots import LOOK_BACK, SnapshotFormatError, assemble, parts_needed
from holdem.runtime.transport import (
    Apply,
    GroupSettings,
    Listed,
    Listener,
    Member,
    Membership,
    Offsets,
    Record,
    SnapshotRecord,
    TopicPartition,
    Wanted,
    type_header,
)

YIELD_EVERY = 500  # records replayed between two turns of the event loop
SETTLE_S = 10.0


@dataclass(frozen=True)
class LogRecord:
    """One committed record: where it is, what it holds, and its place in the write order."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...]
    timestamp: int  # the log's write sequence: a total order of every commit's records


@dataclass
class _Group:
    committed: dict[TopicPartition, int] = field(default_factory=dict)
    members: list[MemoryConsumer] = field(default_factory=list)
    ghosts: list[Listed] = field(default_factory=list)  # listed, never joined (``ghost``)
    generation: int = 0
    held: bool = False  # its committed offsets never answered (``hold_committed``)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class MemoryTransport:
    """A log in memory and ``holdem.runtime.transport.Transport`` over it. Topics not made by
    ``ensure_topics`` get ``partitions`` partitions when first written or read."""

    def __init__(self, partitions: int = 3) -> None:
        self.partitions = partitions
        self._topics: dict[str, list[list[LogRecord]]] = {}
        self._groups: dict[str, _Group] = {}
        self._epochs: dict[str, int] = {}
        self._followers: list[MemoryFollower] = []
        self._sequence = itertools.count()
        self._changed = asyncio.Event()

    # The log.

    def _log(self, topic: str) -> list[list[LogRecord]]:
        found = self._topics.get(topic)
        if found is None:
            found = self._topics[topic] = [[] for _ in range(self.partitions)]
        return found

    def end(self, tp: TopicPartition) -> int:
        """The next offset of ``tp`` (its high watermark: every record is committed)."""
        return len(self._log(tp.topic)[tp.partition])

    def _append(
        self,
        writes: Sequence[tuple[str, int | None, bytes | None, bytes | None, Sequence[Any]]],
    ) -> list[LogRecord]:
        """Commit (topic, partition or None, key, value, headers) records, all at once."""
        placed = []
        for topic, partition, key, value, headers in writes:
            partitions = self._log(topic)
            if partition is None:  # Kafka's default partitioner: murmur2 of the key
                partition = partition_for_key(key, len(partitions)) if key is not None else 0
            log = partitions[partition]
            record = LogRecord(
                topic, partition, len(log), key, value, tuple(headers), next(self._sequence)
            )
            log.append(record)
            placed.append(record)
        self._changed.set()
        self._changed = asyncio.Event()
        return placed

    async def publish(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        headers: Sequence[tuple[str, bytes]] = (),
        partition: int | None = None,
    ) -> LogRecord:
        """Write one record as a client would (not in a transaction): on the partition murmur2
        gives its key unless ``partition`` says otherwise."""
        [record] = self._append([(topic, partition, key, value, headers)])
        return record

    def records(self, topic: str) -> list[LogRecord]:
        """Every committed record of ``topic``, in the order they were written."""
        return sorted(itertools.chain(*self._log(topic)), key=lambda r: r.timestamp)

    def values(self, topic: str) -> list[bytes]:
        return [r.value for r in self.records(topic) if r.value is not None]

    async def _wait(self, deadline: float) -> bool:
        """Until something is written or ``deadline`` (the event loop's clock); False: timed
        out."""
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0:
            return False
        try:  # not wait_for: on 3.11 it loses a stop's cancel that lands as the write wakes it
            async with asyncio.timeout(remaining):
                await self._changed.wait()
        except TimeoutError:
            return False
        return True

    # Settling.

    def unsettled(self) -> list[str]:
        """What is still to be read or committed: empty when everything is."""
        behind = []
        for group_id, group in self._groups.items():
            for member in group.members:
                if member.assignment() and not member.idle:
                    behind.append(f"{member.settings.client_id} is busy")
                for tp in sorted(member.assignment()):
                    end = self.end(tp)
                    if member.positions.get(tp, 0) < end or group.committed.get(tp, 0) < end:
                        behind.append(
                            f"{group_id} at {tp.topic}/{tp.partition}: read "
                            f"{member.positions.get(tp, 0)}, committed "
                            f"{group.committed.get(tp, 0)} of {end}"
                        )
        for follower in self._followers:
            if not follower.idle:
                behind.append("a follower is busy")
            for tp, position in follower.positions.items():
                if position < self.end(tp):
                    behind.append(f"a follower at {tp.topic}/{tp.partition}: {position}")
        return behind

    async def settle(self, timeout_s: float = SETTLE_S) -> None:
        """Wait until every group member has read and committed all of its assignment, and
        every follower has read to the end (what a service publishes is read by others, and
        so on). ``TimeoutError`` naming what is behind after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while True:
            if not self.unsettled():
                await asyncio.sleep(0)  # once more after a turn: nothing was about to start
                if not self.unsettled():
                    return
            if time.monotonic() > deadline:
                raise TimeoutError(f"not settled after {timeout_s}s: {self.unsettled()}")
            await asyncio.sleep(0.001)

    # Transport.

    def consumer(self, settings: GroupSettings) -> MemoryConsumer:
        return MemoryConsumer(self, settings)

    def producer(self, transactional_id: str, retries: int) -> MemoryProducer:
        return MemoryProducer(self, transactional_id)

    def follower(self, tps: Sequence[TopicPartition]) -> MemoryFollower:
        return MemoryFollower(self, tps)

    async def replay(
        self,
        topics: Collection[str],
        partitions: Collection[int],
        apply: Apply,
        *,
        starts: Mapping[Any, int] | None = None,
        timeout_s: float = 120.0,
        wanted: Wanted | None = None,
        stuck: Callable[[], Awaitable[None]] | None = None,
    ) -> int:
        starts = starts or {}  # every transaction is whole at once here: nothing is ever stuck
        read = 0
        for partition in partitions:
            records: list[LogRecord] = []
            for topic in topics:
                log = self._log(topic)[partition]
                records += log[starts.get(TopicPartition(topic, partition), 0) : len(log)]
            for record in sorted(records, key=lambda r: r.timestamp):
                if record.value is None:
                    continue
                read += 1
                if wanted is None or wanted(record.topic, type_header(record.headers)):
                    apply(record.topic, record.value, record.key, partition, record.headers)
                if read % YIELD_EVERY == 0:
                    await asyncio.sleep(0)
        return read

    async def latest_snapshots(self, topic: str, partitions: list[int]) -> dict[int, bytes]:
        found: dict[int, bytes] = {}
        for partition in partitions:
            log = self._log(topic)[partition]
            values = [r for r in log[-LOOK_BACK:] if r.value is not None]
            if not values:
                continue
            last = values[-1]
            assert last.value is not None
            parts = parts_needed(last.value)
            if parts > 1:  # its parts are the records just before it (one transaction)
                values = [r for r in log[max(last.offset - parts - 2, 0) :] if r.value is not None]
            try:
                found[partition] = assemble([r.value for r in values if r.value is not None])
            except SnapshotFormatError:
                found[partition] = b""
        return found

    async def ensure_topics(self, names: Sequence[str], partitions: int) -> None:
        for name in names:
            if name not in self._topics:
                self._topics[name] = [[] for _ in range(partitions)]
            elif len(self._topics[name]) != partitions:
                raise ValueError(
                    f"expected {partitions} partitions: {name} has {len(self._topics[name])}"
                )

    def admin(self) -> MemoryAdmin:
        return MemoryAdmin(self)

    def ghost(self, group_id: str, member_id: str, client_id: str) -> None:
        """A member the group lists for ever without it joining or heartbeating: what a
        restarted broker may list for a member that died during its outage (issue 26)."""
        self._group(group_id).ghosts.append(Listed(member_id, client_id))

    def hold_committed(self, group_id: str) -> None:
        """The group's committed offsets are never answered from now on: what a coordinator
        does while a transaction that commits offsets for it stays open (UNSTABLE_OFFSET_COMMIT
        to a stable fetch). Its members assigned after this read nothing."""
        self._group(group_id).held = True

    # Groups.

    def _group(self, group_id: str) -> _Group:
        found = self._groups.get(group_id)
        if found is None:
            found = self._groups[group_id] = _Group()
        return found

    async def _join(self, member: MemoryConsumer) -> None:
        group = self._group(member.settings.group_id)
        async with group.lock:
            group.members.append(member)
            await self._rebalance(group)

    async def _leave(self, member: MemoryConsumer) -> None:
        group = self._group(member.settings.group_id)
        async with group.lock:
            if member not in group.members:
                return
            group.members.remove(member)
            member.leave()
            await self._rebalance(group)

    async def _rebalance(self, group: _Group) -> None:
        group.generation += 1
        for member in group.members:  # what a heartbeat would tell them: a rejoin is due
            member.rejoin_pending = True
        for member in group.members:
            revoked, member.assigned = member.assigned, set()
            await member.listener_or_fail().on_partitions_revoked(revoked)
        for n, member in enumerate(group.members):
            member.assigned = set() if n else member.subscription()
            # A group whose committed offsets are held (``hold_committed``) gives no position:
            # aiokafka then waits for the fetch of the committed offsets, and reads nothing.
            member.positions = (
                {} if group.held else {tp: group.committed.get(tp, 0) for tp in member.assigned}
            )
            member.generation, member.rejoin_pending, member.idle = group.generation, False, False
            await member.listener_or_fail().on_partitions_assigned(set(member.assigned))

    def _commit_offsets(self, group_id: str, offsets: Offsets, member: Member | None) -> None:
        group = self._group(group_id)
        if member is not None and (
            member.generation != group.generation
            or member.member_id not in {m.member_id for m in group.members}
        ):
            raise FatalError(
                f"offsets refused, no longer the group's member: {member} (generation "
                f"{group.generation})"
            )
        for tp, offset in offsets.items():
            group.committed[TopicPartition(tp.topic, tp.partition)] = int(
                getattr(offset, "offset", offset)
            )


class MemoryConsumer:
    """A member of a consumer group of a ``MemoryTransport``."""

    def __init__(self, transport: MemoryTransport, settings: GroupSettings) -> None:
        self.transport = transport
        self.settings = settings
        self.member_id = f"{settings.client_id}-{uuid.uuid4().hex[:12]}"
        self.topics: list[str] = []
        self.listener: Listener | None = None
        self.assigned: set[TopicPartition] = set()
        self.positions: dict[TopicPartition, int] = {}
        self.generation: int | None = None
        self.rejoin_pending = False
        self.idle = False  # polled since its assignment, and found nothing to read

    def subscribe(self, topics: Sequence[str], listener: Listener) -> None:
        self.topics, self.listener = list(topics), listener

    def listener_or_fail(self) -> Listener:
        if self.listener is None:
            raise RuntimeError("a member joined without subscribing")
        return self.listener

    def subscription(self) -> set[TopicPartition]:
        return {
            TopicPartition(topic, partition)
            for topic in self.topics
            for partition in range(len(self.transport._log(topic)))
        }

    async def start(self) -> None:
        await self.transport._join(self)

    async def stop(self) -> None:
        await self.transport._leave(self)

    def leave(self) -> None:
        self.assigned, self.positions, self.generation = set(), {}, None

    def _fetch(self, max_records: int) -> dict[TopicPartition, list[LogRecord]]:
        waiting: list[LogRecord] = []
        for tp in self.assigned:
            if tp not in self.positions:  # its committed offset not fetched: nothing to read
                continue
            waiting += self.transport._log(tp.topic)[tp.partition][self.positions[tp] :]
        batch: dict[TopicPartition, list[LogRecord]] = {}
        last = None
        for record in sorted(waiting, key=lambda r: r.timestamp)[:max_records]:
            tp = TopicPartition(record.topic, record.partition)
            if tp in batch and tp != last:
                break  # decided partition by partition, the batch would reorder the writes
            batch.setdefault(tp, []).append(record)
            last = tp
        for tp, records in batch.items():
            self.positions[tp] = records[-1].offset + 1
        return batch

    async def getmany(self, *, timeout_ms: int, max_records: int) -> dict[Any, Any]:
        deadline = asyncio.get_running_loop().time() + timeout_ms / 1000
        while True:
            batch = self._fetch(max_records)
            self.idle = not batch
            if batch or not await self.transport._wait(deadline):
                return batch

    def assignment(self) -> set[Any]:
        return set(self.assigned)

    async def position(self, tp: TopicPartition) -> int:
        return self.positions[TopicPartition(tp.topic, tp.partition)]

    def known_position(self, tp: TopicPartition) -> int | None:
        return self.positions.get(TopicPartition(tp.topic, tp.partition))

    def highwater(self, tp: TopicPartition) -> int | None:
        return self.transport.end(tp)

    async def end_offsets(self, tps: Sequence[TopicPartition]) -> dict[Any, int]:
        return {tp: self.transport.end(tp) for tp in tps}

    async def committed(self, tps: Sequence[TopicPartition]) -> dict[Any, int | None]:
        group = self.transport._group(self.settings.group_id)
        return {tp: group.committed.get(TopicPartition(tp.topic, tp.partition)) for tp in tps}

    def membership(self) -> Membership:
        joined = self.generation is not None
        return Membership(self.member_id if joined else None, self.generation, self.rejoin_pending)

    def busy(self) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()  # no poll clock: a member never leaves by itself


class MemoryProducer:
    """A transactional producer of a ``MemoryTransport``: one ``transact``, one commit."""

    def __init__(self, transport: MemoryTransport, transactional_id: str) -> None:
        self.transport = transport
        self.transactional_id = transactional_id
        self.epoch: int | None = None

    async def start(self) -> None:  # init_transactions: fences an older producer of this id
        epoch = self.transport._epochs.get(self.transactional_id, 0) + 1
        self.transport._epochs[self.transactional_id] = self.epoch = epoch

    async def stop(self) -> None:
        return None

    async def renew(self) -> None:
        await self.start()

    async def transact(
        self,
        records: Sequence[Record],
        snapshots: Sequence[SnapshotRecord],
        offsets: Offsets,
        group_id: str | None,
        member: Member | None,
    ) -> None:
        if self.epoch is None:
            raise RuntimeError("TransactionalOutbox.commit before start")
        if self.transport._epochs[self.transactional_id] != self.epoch:
            raise FatalError(fenced(self.transactional_id, "a newer epoch"))
        if offsets and group_id is not None:  # refused before anything is written
            self.transport._commit_offsets(group_id, offsets, member)
        self.transport._append(
            [(r.topic, None, r.key.encode(), r.value, r.header_list()) for r in records]
            + [(topic, partition, key, value, ()) for topic, partition, key, value in snapshots]
        )


class MemoryAdmin:
    """Lists a ``MemoryTransport``'s groups: their members, then their ghosts."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.transport = transport
        self.fail = False  # set by a test: the broker cannot describe the group

    async def members(self, group_id: str) -> list[Listed] | None:
        if self.fail:
            return None
        group = self.transport._groups.get(group_id)
        if group is None:
            return []
        joined = [Listed(m.member_id, m.settings.client_id) for m in group.members]
        return joined + list(group.ghosts)

    async def close(self) -> None:
        return None


class MemoryFollower:
    """A group-less reader of a ``MemoryTransport``'s partitions, from their beginning."""

    def __init__(self, transport: MemoryTransport, tps: Sequence[TopicPartition]) -> None:
        self.transport = transport
        self.positions = {TopicPartition(tp.topic, tp.partition): 0 for tp in tps}
        self.idle = False  # found nothing to read at its last poll

    async def start(self) -> None:
        self.transport._followers.append(self)

    async def stop(self) -> None:
        if self in self.transport._followers:
            self.transport._followers.remove(self)

    async def getmany(self, *, timeout_ms: int) -> dict[Any, Any]:
        deadline = asyncio.get_running_loop().time() + timeout_ms / 1000
        while True:
            batch = {}
            for tp, position in self.positions.items():
                records = self.transport._log(tp.topic)[tp.partition][position:]
                if records:
                    batch[tp] = records
                    self.positions[tp] = records[-1].offset + 1
            self.idle = not batch
            if batch or not await self.transport._wait(deadline):
                return batch
