"""The streaming audit's reader (ADR 040): the run's topics read once, each partition in offset
order and the partitions interleaved by record time, into an ``AuditFold``; alone (every
partition) or as one member of a Kafka consumer group that splits the partitions between
workers, whose partial results ``check_shares`` and ``AuditFold.merge`` join into one verdict.

The topics keyed by player are co-partitioned (a player's records are on the same partition of
each), so the group's range assignor gives each member whole players. The tables topic is keyed
by table: every member reads it whole, first."""

from __future__ import annotations

import asyncio
import heapq
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

from holdem.core.wire.connection import KafkaConnection, as_connection, start_or_close
from holdem.core.wire.topics import ROLES, Topics
from holdem.harness.audit_fold import AuditFold
from holdem.harness.audit_log import Record
from holdem.harness.audit_read import partitions_of, read_topic

READ_TIMEOUT_S = 3600.0  # a whole read; a share waits SETTLE_TIMEOUT_S for its group first
SETTLE_TIMEOUT_S = 120.0
WHOLE_ROLES = ("tables",)  # keyed by table, not by player: every share reads them whole
BUFFERED = 20_000  # records buffered per partition before its fetching pauses
SHARE_LOST = 70  # a worker's exit status when the group takes its share away
SESSION_TIMEOUT_MS = 45_000  # the broker's group.max.session.timeout.ms allows up to 30 min
MAX_POLL_INTERVAL_MS = 900_000  # between two fetches: one buffered batch folded
YIELD_EVERY = 200  # records folded between two turns of the event loop


class ShareLostError(Exception):
    """The consumer group took partitions from this worker (or gave it others) mid-read."""


async def stream_partial(
    connection: KafkaConnection | str,
    topics: Topics,
    audit: AuditFold,
    *,
    roles: Iterable[str] | None = None,
    group: str | None = None,
    members: int = 1,
) -> dict[str, Any]:
    """Fold every committed record of the run's topics (``roles``: only those) into ``audit``;
    with ``group``, only this member's share of the partitions, once the group holds
    ``members`` members. The partial result, with the share it covers."""
    connection = as_connection(connection)
    counts = await _partition_counts(connection, topics, roles)
    share: dict[str, list[int]] = {}
    for role in WHOLE_ROLES:
        if role in counts:
            for r in await read_topic(connection, getattr(topics, role)):
                audit.feed(_record(role, r))
            share[role] = list(range(counts[role]))
    split = {getattr(topics, role): role for role in counts if role not in WHOLE_ROLES}
    consumer = AIOKafkaConsumer(
        **connection.kwargs(),
        group_id=group,
        isolation_level="read_committed",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        # A member is a slow reader on a loaded machine: a missed heartbeat would end its share.
        session_timeout_ms=SESSION_TIMEOUT_MS,
        heartbeat_interval_ms=SESSION_TIMEOUT_MS // 10,
        max_poll_interval_ms=MAX_POLL_INTERVAL_MS,
    )
    await start_or_close(consumer)
    try:
        listener = ShareListener()
        if group is None:
            consumer.assign([TopicPartition(t, p) for t in split for p in range(counts[split[t]])])
        else:
            consumer.subscribe(topics=sorted(split), listener=listener)
            await _settle(consumer, connection, group, members, listener)
        assignment = sorted(consumer.assignment())
        for tp in assignment:
            share.setdefault(split[tp.topic], []).append(tp.partition)
        for role in split.values():
            share.setdefault(role, [])
        listener.reading = True
        begins = await consumer.beginning_offsets(assignment)
        ends = await consumer.end_offsets(assignment)
        for tp, offset in begins.items():
            consumer.seek(tp, offset)
        deadline = time.monotonic() + READ_TIMEOUT_S
        async for batch in _in_record_time(consumer, begins, ends, listener, deadline):
            for n, r in enumerate(batch, 1):
                audit.feed(_record(split[r.topic], r))
                if n % YIELD_EVERY == 0:  # let the heartbeat and the fetcher run
                    await asyncio.sleep(0)
        if group is not None:
            listener.reading = False  # read: a change of share no longer matters to this one
            await _linger(consumer, assignment, ends, _all_partitions(split, counts))
    finally:
        await consumer.stop()
    partial = audit.partial()
    partial["share"] = {role: sorted(p) for role, p in share.items()}
    partial["partitions"] = counts
    return partial


def check_shares(partials: Sequence[Mapping[str, Any]]) -> None:
    """Refuse partials that do not cover every partition exactly once (a share missing, or two
    workers that read the same partitions): their merge would not be the log's verdict."""
    if not partials:
        raise ValueError("no partial results to merge")
    counts = partials[0]["partitions"]
    for partial in partials[1:]:
        if partial["partitions"] != counts:
            raise ValueError(f"partials of different topics: {partial['partitions']} != {counts}")
    for role, count in sorted(counts.items()):
        if role in WHOLE_ROLES:
            continue
        read = [p for partial in partials for p in partial["share"].get(role, [])]
        twice = sorted(p for p in set(read) if read.count(p) > 1)
        missing = sorted(set(range(count)) - set(read))
        if twice:
            raise ValueError(f"{role}: partitions {twice} read by more than one share")
        if missing:
            raise ValueError(f"{role}: partitions {missing} read by no share")


class ShareListener(ConsumerRebalanceListener):  # type: ignore[misc]
    """Counts the group's assignments; once reading, any change of share is a lost share."""

    def __init__(self) -> None:
        self.reading = False
        self.lost = False
        self.assignments = 0

    async def on_partitions_revoked(self, revoked: Any) -> None:
        if self.reading and revoked:
            self.lost = True

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self.assignments += 1
        if self.reading:
            self.lost = True


async def _settle(
    consumer: AIOKafkaConsumer,
    connection: KafkaConnection,
    group: str,
    members: int,
    listener: ShareListener,
) -> None:
    """Poll until the group is stable with ``members`` members and this member's share has not
    changed over one more poll: only then is it the share of ``members`` workers."""
    admin = AIOKafkaAdminClient(**connection.kwargs(), request_timeout_ms=10_000)
    await start_or_close(admin)
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    try:
        while True:
            if time.monotonic() > deadline:
                raise TimeoutError(f"group {group} did not settle with {members} members")
            await consumer.getmany(timeout_ms=300)  # joins; what it fetches is read again
            seen = listener.assignments
            if consumer.assignment() and await _stable(admin, group) == members:
                await consumer.getmany(timeout_ms=300)
                if listener.assignments == seen and await _stable(admin, group) == members:
                    return
    finally:
        await admin.close()


def _all_partitions(split: Mapping[str, str], counts: Mapping[str, int]) -> list[TopicPartition]:
    return [TopicPartition(t, p) for t, role in split.items() for p in range(counts[role])]


async def _linger(
    consumer: AIOKafkaConsumer,
    assignment: Sequence[TopicPartition],
    ends: Mapping[TopicPartition, int],
    every: Sequence[TopicPartition],
) -> None:
    """Say this share is read (its end offsets committed as the group's) and stay in the group
    until every share is: a member that left at once would make the group take the others'
    shares away mid-read. Bounded: a member that died leaves its share uncommitted. The group
    must be new for each audit (``--workers`` makes one)."""
    try:
        await consumer.commit({tp: ends[tp] for tp in assignment})
        deadline = time.monotonic() + SETTLE_TIMEOUT_S
        while time.monotonic() < deadline:  # a group serves one audit: any commit is a share read
            if all([await consumer.committed(tp) is not None for tp in every]):
                return
            await asyncio.sleep(0.5)
    except KafkaError:  # the group moved on (a member died): this share's result stands
        return


async def _stable(admin: AIOKafkaAdminClient, group: str) -> int:
    """The number of members of ``group`` if it is stable, else 0."""
    described = await admin.describe_consumer_groups([group])
    groups = [g for response in described for g in response.to_object()["groups"]]
    if len(groups) != 1 or groups[0]["error_code"] != 0 or groups[0]["state"] != "Stable":
        return 0
    return len(groups[0]["members"])


async def _in_record_time(
    consumer: AIOKafkaConsumer,
    begins: Mapping[TopicPartition, int],
    ends: Mapping[TopicPartition, int],
    share: ShareListener,
    deadline: float,
) -> Any:
    """Batches of records, each partition in offset order and the partitions interleaved by
    record time: a batch holds what every partition still being read has gone past."""
    buffers: dict[TopicPartition, deque[ConsumerRecord[bytes, bytes]]] = {
        tp: deque() for tp in ends
    }
    live = {tp for tp, end in ends.items() if end > begins.get(tp, 0)}
    while live or any(buffers.values()):
        if share.lost:
            raise ShareLostError("the consumer group changed this worker's share mid-read")
        starving = [tp for tp in live if not buffers[tp]]
        if starving:
            if time.monotonic() > deadline:
                raise TimeoutError(f"end offsets of {sorted(starving)} not reached in time")
            full = [tp for tp in live if len(buffers[tp]) >= BUFFERED]
            consumer.pause(*full)
            consumer.resume(*[tp for tp in live if tp not in full])
            for tp, batch in (await consumer.getmany(*starving, timeout_ms=500)).items():
                buffers[tp].extend(r for r in batch if r.offset < ends[tp])
            for tp in starving:
                if not buffers[tp] and await consumer.position(tp) >= ends[tp]:
                    live.discard(tp)
            continue
        # Every partition still being read has a record buffered: what is no later than the
        # earliest of their last buffered records can go, in record time.
        bound = min((buffers[tp][-1].timestamp for tp in live), default=None)
        ready = []
        for tp, buffer in buffers.items():
            out = []
            while buffer and (bound is None or buffer[0].timestamp <= bound):
                out.append(buffer.popleft())
            if out:
                ready.append(out)
            if tp in live and not buffer and await consumer.position(tp) >= ends[tp]:
                live.discard(tp)
        yield list(heapq.merge(*ready, key=lambda r: r.timestamp))


async def _partition_counts(
    connection: KafkaConnection, topics: Topics, roles: Iterable[str] | None
) -> dict[str, int]:
    chosen = set(ROLES if roles is None else roles)
    counts = {}
    for role in ROLES:
        if role == "admin" or role not in chosen:  # table commands: their answers are audited
            continue
        found = await partitions_of(connection, getattr(topics, role))
        if not found:
            if role.startswith("seamless_"):  # a deployment from before ADR 015: no bridge
                continue
            raise LookupError(f"topic {getattr(topics, role)} does not exist")
        counts[str(role)] = len(found)
    return counts


def _record(role: str, r: ConsumerRecord[bytes, bytes]) -> Record:
    return Record.of(role, r.partition, r.offset, r.value or b"", r.timestamp, r.headers)
