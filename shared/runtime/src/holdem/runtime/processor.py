"""The processing loop every service shares: check, parse, fold, decide, publish atomically, fold
own events; state rebuilt from the log before anything is handled. See docs/services-design.md.

No record can stall a partition: whatever goes wrong with one record, it ends on the dead-letter
topic (``holdem.rejected``) and the offset moves on. Only a failure of the service itself (its
producer cannot publish, or was fenced) escapes ``handle``, as ``FatalError``."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, NamedTuple, TypeVar

import structlog

from holdem.client.commands import partition_for_key
from holdem.core.contracts import (
    ADMIN_TYPES,
    COMMAND_TYPES,
    ContractError,
    Envelope,
    Malfunction,
    Message,
    MessageRejected,
    Reason,
    RecordReason,
    dump,
    parse,
)
from holdem.core.contracts.rejected import RAW_LIMIT
from holdem.core.decider import Context
from holdem.runtime.metrics import Metrics
from holdem.runtime.outbox import FatalError, Outbox, Record
from holdem.runtime.snapshots import Codec
from holdem.runtime.topics import Topics

S = TypeVar("S")
log = structlog.get_logger(__name__)
ROLES = (
    "commands",
    "rounds",
    "wallet",
    "vault",
    "rejected",
    "queries",
    "replies",
    "seamless_replies",
    "admin",
    "tables",
)
DECIDE_ATTEMPTS = 3
_RECORDS = uuid.UUID("3d1f0c8e-5b7a-4c2e-9f61-7a0e2b4c9d13")
_ID = re.compile(r"[A-Za-z0-9._:@-]{1,64}")  # the contracts' Id, checked before building one


class Origin(NamedTuple):
    """Where a record came from: what a rejection names, and what output ids derive from."""

    topic: str
    partition: int
    offset: int
    raw: bytes
    key: bytes | None = None

    @property
    def seed(self) -> str:
        return f"{self.topic}/{self.partition}/{self.offset}"

    @property
    def cause_id(self) -> str:
        """An Id (the contracts' pattern, 64 characters at most) naming this record."""
        return str(uuid.uuid5(_RECORDS, self.seed))


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Spec(Generic[S]):
    """What makes a service: its decider and which topics it reads and folds."""

    name: str
    initial_state: Callable[[], S]
    evolve: Callable[[S, Any], S]
    decide: Callable[[S, Any, Context], Sequence[Envelope]]
    inputs: tuple[str, ...]  # topic roles consumed
    state_roles: tuple[str, ...]  # topic roles whose events are folded into the state
    outputs: tuple[str, ...] = ()  # topic roles it publishes to (documents the AsyncAPI)
    commands: frozenset[str] = frozenset()  # command types this service owns
    rejects_unreadable: frozenset[str] = frozenset()  # roles whose unreadable records it reports
    make_context: Callable[[Message, datetime], Context] | None = None
    tick: Callable[[S, Context], list[Message]] | None = None  # periodic decisions (timeouts)
    tick_interval_s: float = 1.0
    open_rounds: Callable[[S], int] | None = None
    on_handled: Callable[[S, Any, Any], None] | None = None  # (state, input, events): metrics
    # The message types it folds or decides on; records whose type header names another type
    # are skipped unparsed (None: parse everything).
    reads: frozenset[str] | None = None
    snapshot: Codec | None = None  # how its state is snapshotted (None: always a full replay)
    # Roles read whole (every partition) into one book shared by all partitions' decisions,
    # e.g. the table book: replayed before the service is ready, kept current (loop.BookTail),
    # and fed its own events as they are published. ``fold_book`` must be idempotent.
    book_roles: tuple[str, ...] = ()
    fold_book: Callable[[Any], None] | None = None


@dataclass
class Processor(Generic[S]):
    """Holds one service's state and applies the processing model to each record."""

    spec: Spec[S]
    topics: Topics
    outbox: Outbox
    metrics: Metrics
    clock: Callable[[], datetime] = utc_now
    # Partition count of every topic, for the wrong_partition check; None turns the check off
    # (faststream's in-memory broker puts every record on partition 0).
    partitions: int | None = None
    # One state per partition: a player's records all share one partition number
    # (co-partitioning), so each partition is folded, decided and snapshotted on its own.
    states: dict[int, S] = field(init=False, default_factory=dict)
    lock: asyncio.Lock = field(init=False, default_factory=asyncio.Lock)
    _current: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self._role_of = {getattr(self.topics, role): role for role in ROLES}

    @property
    def state(self) -> S:
        """The state of the partition being handled (in memory: the only one)."""
        found = self.states.get(self._current)
        if found is None:
            found = self.states[self._current] = self.spec.initial_state()
        return found

    @state.setter
    def state(self, value: S) -> None:
        self.states[self._current] = value

    def on_partition(self, partition: int) -> Processor[S]:
        """Make ``partition``'s state the current one (the caller holds the lock)."""
        self._current = partition
        return self

    def state_for(self, player_id: str) -> S:
        """The state that holds ``player_id`` (tests, tools)."""
        partition = partition_for_key(player_id.encode(), self.partitions) if self.partitions else 0
        return self.on_partition(partition).state

    def topic_of(self, role: str) -> str:
        name: str = getattr(self.topics, role)
        return name

    def reset(self, partitions: Iterable[int] | None = None) -> None:
        """Forget the state of ``partitions`` (default: all)."""
        for partition in list(self.states) if partitions is None else partitions:
            self.states.pop(partition, None)

    def fold(
        self, topic: str, raw: bytes, key: bytes | None = None, partition: int | None = None
    ) -> None:
        """Replay path: fold one committed record; what does not parse, or is not what its key
        and partition say, was never acted on."""
        try:
            message = parse(self._role_of[topic], raw)
        except ContractError:
            return
        if key is not None and partition is not None and self._refusal(message, key, partition):
            return
        if self._role_of[topic] in self.spec.book_roles:
            self._fold_book(message)
            return
        self.on_partition(partition or 0)
        self.state = self.spec.evolve(self.state, message)

    def fold_book(self, topic: str, raw: bytes, key: bytes | None, partition: int) -> None:
        """Fold one committed record of a book role (replay and tail): never a partition's
        state, whatever partition the record is on."""
        if self._role_of.get(topic) in self.spec.book_roles:
            self.fold(topic, raw, key, partition)

    def _fold_book(self, message: Envelope) -> None:
        if self.spec.fold_book is not None:
            self.spec.fold_book(message)

    async def handle(
        self, topic: str, partition: int, offset: int, raw: bytes, key: bytes | None = None
    ) -> None:
        """Handle one record on its own and publish what it decided (the in-memory path)."""
        async with self.lock:
            await self.process(topic, partition, offset, raw, key)
        await self.outbox.flush()

    async def process(
        self, topic: str, partition: int, offset: int, raw: bytes, key: bytes | None = None
    ) -> None:
        """Handle one record of a batch: the caller holds ``lock`` and commits the outbox.
        Never raises for anything the record did; ``FatalError`` when the service cannot
        publish (the caller must end the process)."""
        origin = Origin(topic, partition, offset, raw, key)
        self.on_partition(partition)
        try:
            await self._handle(origin)
        except FatalError:
            raise
        except Exception as error:  # whatever broke, the record is dead-lettered, not retried
            log.exception("record failed", topic=topic, partition=partition, offset=offset)
            detail = f"{type(error).__name__}: {error}"
            await self._reject(origin, Reason.PROCESSING_FAILED, detail)

    def wants(self, topic: str, kind: bytes | None) -> bool:
        """Whether a record is worth parsing: its ``type`` header (when it has one) names a
        message this service reads. The header only saves work; the body decides."""
        reads = self.spec.reads
        return reads is None or kind is None or kind.decode(errors="replace") in reads

    async def _handle(self, origin: Origin) -> None:
        role = self._role_of[origin.topic]
        try:
            message = parse(role, origin.raw)
        except ContractError as error:
            if self._reports(role, origin.raw):
                await self._reject(origin, error.reason, error.detail)
            return
        refusal = self._refusal(message, origin.key, origin.partition)
        if refusal is not None:
            if self._reports(role, origin.raw):
                await self._reject(origin, *refusal)
            return
        if role in self.spec.state_roles:
            self.state = self.spec.evolve(self.state, message)
        await self._decide_and_publish(message, origin)

    def _refusal(
        self, message: Envelope, key: bytes | None, partition: int
    ) -> tuple[RecordReason, str] | None:
        """Why a readable record is still not what it claims: its key (the body's ``key``: a
        player's ``player_id``, a table's ``table_id``), or its partition."""
        if key is None or key != message.key.encode():
            shown = "no key" if key is None else f"key {key[:80]!r}"
            name = "player_id" if isinstance(message, Message) else "table_id"
            return RecordReason.KEY_MISMATCH, f"{shown} but {name} {message.key!r}"
        if self.partitions is not None:
            expected = partition_for_key(key, self.partitions)
            if partition != expected:
                return (
                    RecordReason.WRONG_PARTITION,
                    f"partition {partition}, but murmur2 puts key {message.key!r} on "
                    f"{expected} of {self.partitions}",
                )
        return None

    async def run_tick(self) -> None:
        """One periodic decision (timeouts, watchdog), serialised with record handling."""
        if self.spec.tick is None:
            return
        async with self.lock:
            now = self.clock()
            for partition in sorted(self.states):
                self.on_partition(partition)
                cause = f"tick:{self.spec.name}:{partition}:{now.isoformat()}"
                events = self.spec.tick(self.state, Context(now=now, cause_id=cause))
                await self._publish(events)
                self.metrics.observe_events(self.spec.name, events)
            self._update_open_rounds()
        await self.outbox.flush()

    async def _decide_and_publish(self, message: Any, origin: Origin) -> None:
        now = self.clock()
        make = self.spec.make_context or _default_context
        for attempt in range(1, DECIDE_ATTEMPTS + 1):
            try:
                ctx = make(message, now)
                ctx.seed = origin.seed  # output ids from where the input is, not from its ids
                events = self.spec.decide(self.state, message, ctx)
                break
            except Exception as error:  # a poison message must not block the partition
                log.exception("decide failed", attempt=attempt, event_type=message.type)
                if attempt == DECIDE_ATTEMPTS:
                    await self._poison(message, origin, error)
                    return
        await self._publish(events)
        self.metrics.observe(self.spec.name, message, events, self.clock())
        if self.spec.on_handled is not None:
            self.spec.on_handled(self.state, message, events)
        self._update_open_rounds()

    def _update_open_rounds(self) -> None:
        if self.spec.open_rounds is not None:
            count = sum(self.spec.open_rounds(state) for state in self.states.values())
            self.metrics.open_rounds.labels(self.spec.name).set(count)

    async def _publish(self, events: Sequence[Envelope]) -> None:
        records: list[Record] = [
            (self.topic_of(e.TOPIC), e.key, dump(e), e.type)  # type: ignore[attr-defined]
            for e in events
        ]
        await self.outbox.send(records)
        for event in events:
            if event.TOPIC in self.spec.book_roles:
                self._fold_book(event)
            elif event.TOPIC in self.spec.state_roles:
                self.state = self.spec.evolve(self.state, event)
            log.debug(
                "published",
                event_type=event.type,  # type: ignore[attr-defined]
                round_id=getattr(event, "round_id", None),
                key=event.key,
            )

    async def _poison(self, message: Envelope, origin: Origin, error: Exception) -> None:
        ctx = Context(now=self.clock(), cause_id=message.event_id, seed=f"poison/{origin.seed}")
        detail = f"{type(error).__name__}: {error}"
        events: list[Message] = [
            self._rejection(ctx, origin, Reason.PROCESSING_FAILED, detail, message.key)
        ]
        # A round is reported broken only by a service that writes rounds: a failed query (the
        # query service) must never void the round it asked about.
        if (
            isinstance(message, Message)
            and message.round_id is not None
            and "rounds" in self.spec.outputs
        ):
            events.append(
                Malfunction(
                    **ctx.envelope(message.player_id, message.round_id),
                    source=self.spec.name,
                    reason=f"processing_failed: {type(error).__name__}",
                )
            )
        await self._publish(events)
        self.metrics.observe(self.spec.name, message, events, self.clock())

    async def _reject(self, origin: Origin, reason: Reason | RecordReason, detail: str) -> None:
        """Dead-letter one record with its reason. Built only from checked or truncated parts,
        so the rejection itself cannot fail to validate."""
        ctx = Context(
            now=self.clock(), cause_id=_safe_id(origin.seed) or "record", seed=origin.seed
        )
        event = self._rejection(
            ctx, origin, reason, detail, _lenient_field(origin.raw, "player_id")
        )
        await self._publish([event])
        self.metrics.observe_events(self.spec.name, [event])
        log.warning(
            "rejected",
            reason=reason.value,
            detail=detail[:300],
            topic=origin.topic,
            partition=origin.partition,
            offset=origin.offset,
        )

    def _rejection(
        self,
        ctx: Context,
        origin: Origin,
        reason: Reason | RecordReason,
        detail: str,
        player_hint: str | None,
    ) -> MessageRejected:
        # Keyed by the record's key when it is an id (the sender reads that partition), else
        # by the body's player_id, else "unknown".
        key = origin.key.decode("utf-8", errors="replace") if origin.key is not None else None
        player = _safe_id(key) or _safe_id(player_hint) or "unknown"
        return MessageRejected(
            **ctx.envelope(player),
            service=self.spec.name,
            reason=reason,
            detail=detail[:2000],
            source_topic=origin.topic[:255],
            source_partition=origin.partition,
            source_offset=origin.offset,
            source_key=None if key is None else key[:400],
            raw=origin.raw.decode("utf-8", errors="replace")[:4000],
            raw_base64=base64.b64encode(origin.raw[:RAW_LIMIT]).decode(),
            raw_size=len(origin.raw),
        )

    def _reports(self, role: str, raw: bytes) -> bool:
        """Whether this service answers for a bad record of ``role`` (one service per record:
        the command's owner, or the service named for that topic)."""
        if role in ("commands", "admin"):
            kind = _lenient_field(raw, "type")
            if kind in COMMAND_TYPES | ADMIN_TYPES:
                return kind in self.spec.commands
        return role in self.spec.rejects_unreadable


def _default_context(message: Message, now: datetime) -> Context:
    return Context(now=now, cause_id=message.event_id, correlation_id=message.correlation_id)


def _lenient_field(raw: bytes, name: str) -> str | None:
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    found = value.get(name) if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


def _safe_id(text: str | None) -> str | None:
    return text if text is not None and _ID.fullmatch(text) else None
