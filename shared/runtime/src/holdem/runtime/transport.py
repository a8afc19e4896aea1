"""What the batch loop needs of a log, as Protocols: the group consumer it polls, the
transactional producer its outbox commits through, the readers of a rebuild (replay, latest
snapshot), the group-less follower of the book, the topic check and the group listing that the
twin watch reads (``holdem.runtime.twins``).

Two implementations: Kafka (``holdem.runtime.kafka``, what a service runs) and an in-memory log
(``holdem.runtime.memory``, what the tests run). ``holdem.runtime.loop`` is written against this
module only, so both run the same loop with the same batch and transaction boundaries."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from holdem.core.wire.headers import TYPE_HEADER


class Record(NamedTuple):
    """One record to publish: its topic, key (player_id or table_id), value (JSON), message
    type (the ``type`` header) and further headers (``operator``, ``brand``: ADR 021)."""

    topic: str
    key: str
    value: bytes
    kind: str
    headers: tuple[tuple[str, bytes], ...] = ()

    def header_list(self) -> list[tuple[str, bytes]]:
        """Every header of the record, aiokafka's form: the type first."""
        return [(TYPE_HEADER, self.kind.encode()), *self.headers]


Offsets = dict[Any, int]  # TopicPartition -> the next offset to read, per input partition
SnapshotRecord = tuple[str, int, bytes, bytes]  # topic, partition, key, value


class TopicPartition(NamedTuple):
    """One partition of one topic (equal to, and hashed as, aiokafka's ``TopicPartition``)."""

    topic: str
    partition: int


@dataclass(frozen=True)
class Member:
    """Who commits: the consumer group member's generation and id (and static id, if any)."""

    generation: int
    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True)
class Membership:
    """A consumer's group membership as its coordinator holds it now."""

    member_id: str | None
    generation: int | None
    rejoin_pending: bool


@dataclass(frozen=True)
class GroupSettings:
    """How a service's instance takes part in its consumer group."""

    group_id: str
    client_id: str
    max_records: int  # per poll: one transaction each
    session_timeout_ms: int  # a killed member's partitions move after this
    heartbeat_ms: int
    max_poll_interval_ms: int  # a member polling nothing this long leaves its group
    instance_id: str | None = None  # static membership (KIP-345): its group.instance.id


class Consumed(Protocol):
    """A record as a consumer hands it over."""

    @property
    def offset(self) -> int: ...
    @property
    def key(self) -> bytes | None: ...
    @property
    def value(self) -> bytes | None: ...
    @property
    def headers(self) -> Sequence[tuple[str, bytes]]: ...


Batch = Mapping[Any, Sequence[Any]]  # TopicPartition -> the Consumed records fetched, in order
# (topic, value, key, partition, headers)
Apply = Callable[[str, bytes, bytes | None, int, Sequence[tuple[str, bytes]]], None]
# (topic, the record's type header) -> parse it? An answer depends on these two alone: a replay
# asks once per pair and remembers (holdem.runtime.replay.Merge).
Wanted = Callable[[str, bytes | None], bool]


class Listener(Protocol):
    """Told of each rebalance: what this member loses, then what it gets."""

    async def on_partitions_revoked(self, revoked: set[Any]) -> None: ...
    async def on_partitions_assigned(self, assigned: set[Any]) -> None: ...


class GroupConsumer(Protocol):
    """A member of a consumer group that reads committed records only and commits no offsets
    itself (they go into the producer's transactions)."""

    def subscribe(self, topics: Sequence[str], listener: Listener) -> None: ...
    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    async def getmany(self, *, timeout_ms: int, max_records: int) -> Batch: ...
    def assignment(self) -> set[Any]: ...
    async def position(self, tp: TopicPartition) -> int: ...
    def known_position(self, tp: TopicPartition) -> int | None:
        """Where it reads ``tp`` next, or None while that is not known yet (its committed
        offset not fetched): never waits, unlike ``position``."""
        ...

    def highwater(self, tp: TopicPartition) -> int | None: ...
    async def end_offsets(self, tps: Sequence[TopicPartition]) -> dict[Any, int]: ...
    async def committed(self, tps: Sequence[TopicPartition]) -> dict[Any, int | None]:
        """The group's committed offsets of ``tps`` as the coordinator holds them now, stable
        ones (KIP-447: an offset a transaction still holds open is waited for); None where it
        has none."""
        ...

    def membership(self) -> Membership: ...
    def busy(self) -> contextlib.AbstractContextManager[Any]:
        """A context in which the member counts as polling (a long rebuild is work, not
        idleness: it must not make the member leave its group)."""
        ...


class Producer(Protocol):
    """A transactional producer: each ``transact`` is one transaction, all of it or none."""

    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    async def renew(self) -> None:
        """Initialise the transactional id again (a new epoch): the broker aborts whatever
        transaction the id still has open (ADR 034)."""
        ...

    async def transact(
        self,
        records: Sequence[Record],
        snapshots: Sequence[SnapshotRecord],
        offsets: Offsets,
        group_id: str | None,
        member: Member | None,
    ) -> None:
        """Publish ``records`` and ``snapshots`` and commit ``offsets`` for ``group_id`` as
        ``member`` (refused from a member the group no longer knows). ``FatalError`` when it
        cannot: fenced, refused, or failed every retry."""
        ...


class Follower(Protocol):
    """A group-less reader of partitions from their beginning, then as they grow."""

    async def start(self) -> None: ...
    async def stop(self) -> None: ...
    async def getmany(self, *, timeout_ms: int) -> Batch: ...


class Transport(Protocol):
    """Everything a service instance does with its log."""

    def consumer(self, settings: GroupSettings) -> GroupConsumer: ...
    def producer(self, transactional_id: str, retries: int) -> Producer: ...
    def follower(self, tps: Sequence[TopicPartition]) -> Follower: ...

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
        """Every committed record of ``topics`` x ``partitions`` from ``starts`` (default: the
        beginning) to the end offsets at the start, each partition number's topics in write
        order, to ``apply``; a record whose type header ``wanted`` refuses is skipped unparsed.
        The number of records read. ``TimeoutError`` after ``timeout_s`` without progress.
        ``stuck``: awaited once if transactions open at the start outlast their timeout."""
        ...

    async def latest_snapshots(self, topic: str, partitions: list[int]) -> dict[int, bytes]:
        """The latest snapshot body of each partition of ``topic`` that has one (``b""``: one
        whose parts do not join)."""
        ...

    async def ensure_topics(self, names: Sequence[str], partitions: int) -> None:
        """The topics exist with ``partitions`` partitions and can be served."""
        ...

    def admin(self) -> GroupAdmin:
        """A client that lists a group's members (one per instance, reused: ADR 034)."""
        ...


@dataclass(frozen=True)
class Listed:
    """A member as its group's coordinator lists it."""

    member_id: str
    client_id: str


class GroupAdmin(Protocol):
    """Describes consumer groups; it decides nothing (ADR 034: no start waits on a listing)."""

    async def members(self, group_id: str) -> list[Listed] | None:
        """The members the group lists now; None when the broker cannot say."""
        ...

    async def close(self) -> None: ...


def type_header(headers: Sequence[tuple[str, bytes]] | None) -> bytes | None:
    """A record's ``type`` header (the message type its publisher named), if it has one."""
    for key, value in headers or ():
        if key == TYPE_HEADER:
            return bytes(value)
    return None
