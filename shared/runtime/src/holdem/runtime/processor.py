"""The processing loop every service shares: check, parse, fold, decide, publish atomically, fold
own events; state rebuilt from the log before anything is handled. See docs/services-design.md.

No record can stall a partition: whatever goes wrong with one record, it ends on the dead-letter
topic (``holdem.rejected``) and the offset moves on. Only a failure of the service itself (its
producer cannot publish, or was fenced) escapes ``handle``, as ``FatalError``."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, NamedTuple, TypeVar

import structlog
from structlog.contextvars import bound_contextvars

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
from holdem.core.wire.headers import DEFAULT_OPERATOR, Headers, Stamp
from holdem.core.wire.ids import ID as _ID
from holdem.core.wire.partitioning import partition_for_key
from holdem.core.wire.topics import ROLES, Topics
from holdem.runtime.metrics import Metrics
from holdem.runtime.outbox import FatalError, Outbox, Record
from holdem.runtime.snapshots import Codec

S = TypeVar("S")
log = structlog.get_logger(__name__)
DECIDE_ATTEMPTS = 3
_RECORDS = uuid.UUID("3d1f0c8e-5b7a-4c2e-9f61-7a0e2b4c9d13")
# A round's brand (ADR 021) is the brand its start carries: the wallet's BetPlaced (or, in seamless
# mode, its DebitRequested), stamped from the PlaceBet's header. It is kept per partition until
# the round ends, so every later record of the round carries it, timer-made ones included.
BRAND_STARTS = frozenset({"round.bet_placed", "seamless.debit_requested"})
ROUND_ENDS = frozenset({"round.settled", "round.voided"})
MAX_BRANDS = 4096  # open rounds with a brand remembered per partition (oldest dropped beyond)


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
    # The operator this deployment serves (ADR 021): the ``operator`` header of every record it
    # publishes; an input whose header names another is refused (wrong_operator).
    operator: str = DEFAULT_OPERATOR
    # One state per partition: a player's records all share one partition number
    # (co-partitioning), so each partition is folded, decided and snapshotted on its own.
    states: dict[int, S] = field(init=False, default_factory=dict)
    lock: asyncio.Lock = field(init=False, default_factory=asyncio.Lock)
    # Per partition: "player_id/round_id" -> brand of each open round that has one.
    brands: dict[int, OrderedDict[str, str]] = field(init=False, default_factory=dict)
    _current: int = field(init=False, default=0)
    _stamp: Stamp = field(init=False, default_factory=Stamp)  # the input being handled's

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
            self.brands.pop(partition, None)

    def brands_of(self, partition: int) -> dict[str, str]:
        """The brands of ``partition``'s open rounds (what its snapshot keeps)."""
        return dict(self.brands.get(partition, {}))

    def restore_brands(self, partition: int, brands: Mapping[str, str]) -> None:
        """Brands loaded from ``partition``'s snapshot (its replay adds those after it)."""
        self.brands[partition] = OrderedDict(list(brands.items())[-MAX_BRANDS:])

    def fold(
        self,
        topic: str,
        raw: bytes,
        key: bytes | None = None,
        partition: int | None = None,
        headers: Headers = None,
    ) -> None:
        """Replay path: fold one committed record; what does not parse, or is not what its key,
        partition and headers say, was never acted on."""
        stamp = Stamp.of(headers)
        if self._header_refusal(stamp) is not None:
            return
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
        self._follow_brand(message, stamp.brand)
        self.state = self.spec.evolve(self.state, message)

    def fold_book(
        self, topic: str, raw: bytes, key: bytes | None, partition: int, headers: Headers = None
    ) -> None:
        """Fold one committed record of a book role (replay and tail): never a partition's
        state, whatever partition the record is on."""
        if self._role_of.get(topic) in self.spec.book_roles:
            self.fold(topic, raw, key, partition, headers)

    def _fold_book(self, message: Envelope) -> None:
        if self.spec.fold_book is not None:
            self.spec.fold_book(message)

    async def handle(self, *record: Any, **fields: Any) -> None:
        """Handle one record on its own (``process``'s arguments) and publish what it decided
        (the in-memory path)."""
        async with self.lock:
            await self.process(*record, **fields)
        await self.outbox.flush()

    async def process(
        self,
        topic: str,
        partition: int,
        offset: int,
        raw: bytes,
        key: bytes | None = None,
        headers: Headers = None,
    ) -> None:
        """Handle one record of a batch: the caller holds ``lock`` and commits the outbox.
        Never raises for anything the record did; ``FatalError`` when the service cannot
        publish (the caller must end the process)."""
        origin = Origin(topic, partition, offset, raw, key)
        self.on_partition(partition)
        self._stamp = stamp = Stamp.of(headers)
        # The log lines written while handling a branded record name its brand (ADR 021).
        branded = stamp.brand is not None and stamp.problem() is None
        try:
            with bound_contextvars(brand=stamp.brand) if branded else contextlib.nullcontext():
                await self._handle(origin)
        except FatalError:
            raise
        except Exception as error:  # whatever broke, the record is dead-lettered, not retried
            log.exception("record failed", topic=topic, partition=partition, offset=offset)
            detail = f"{type(error).__name__}: {error}"
            await self._reject(origin, Reason.PROCESSING_FAILED, detail)
        finally:
            self._stamp = Stamp()

    def wants(self, topic: str, kind: bytes | None) -> bool:
        """Whether a record is worth parsing: its ``type`` header (when it has one) names a
        message this service reads. The header only saves work; the body decides."""
        reads = self.spec.reads
        return reads is None or kind is None or kind.decode(errors="replace") in reads

    async def _handle(self, origin: Origin) -> None:
        role = self._role_of[origin.topic]
        header = self._header_refusal(self._stamp)
        if header is not None:  # another operator's record, or headers we cannot trust
            self._stamp = Stamp()  # nothing of them is passed on, not even to the refusal
            if self._reports(role, origin.raw):
                await self._reject(origin, *header)
            return
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
        self._follow_brand(message, self._stamp.brand)
        if role in self.spec.state_roles:
            self.state = self.spec.evolve(self.state, message)
        await self._decide_and_publish(message, origin)

    def _header_refusal(self, stamp: Stamp) -> tuple[RecordReason, str] | None:
        """Why a record's headers refuse it (ADR 021): unreadable, or another operator's. A
        record without an operator header is accepted (clients from before the headers)."""
        problem = stamp.problem()
        if problem is not None:
            return RecordReason.BAD_HEADER, problem
        if stamp.operator is not None and stamp.operator != self.operator:
            return (
                RecordReason.WRONG_OPERATOR,
                f"operator header {stamp.operator[:80]!r}, but this deployment serves "
                f"{self.operator!r}",
            )
        return None

    def _brands(self) -> OrderedDict[str, str]:
        found = self.brands.get(self._current)
        if found is None:
            found = self.brands[self._current] = OrderedDict()
        return found

    def _follow_brand(self, message: Envelope, brand: str | None) -> None:
        """Remember the brand of a round that starts (its first brand stays), forget it when
        the round ends."""
        kind = getattr(message, "type", "")
        if not isinstance(message, Message) or message.round_id is None:
            return
        name = f"{message.player_id}/{message.round_id}"
        brands = self._brands()
        if kind in ROUND_ENDS:
            brands.pop(name, None)
        elif kind in BRAND_STARTS and brand is not None and name not in brands:
            brands[name] = brand
            while len(brands) > MAX_BRANDS:
                brands.popitem(last=False)

    def _brand_of(self, event: Envelope) -> str | None:
        """The brand to stamp on ``event``: its round's, else the input's (a reply, a refusal,
        a deposit made with a brand header)."""
        if isinstance(event, Message) and event.round_id is not None:
            found = self._brands().get(f"{event.player_id}/{event.round_id}")
            if found is not None:
                return found
        return self._stamp.brand

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
            self._stamp = Stamp()  # no input: a round's records carry its remembered brand
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
                ctx.seed = self._seed(origin)  # ids from where the input is, not from its ids
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

    def _seed(self, origin: Origin) -> str:
        """What the ids of the events decided on ``origin`` derive from: the record's
        coordinates, which no client chooses, and this service, since several services read
        one record (the wallet and settlement both decide on a ``round.called``)."""
        return f"{self.spec.name}@{origin.seed}"

    def _update_open_rounds(self) -> None:
        if self.spec.open_rounds is not None:
            count = sum(self.spec.open_rounds(state) for state in self.states.values())
            self.metrics.open_rounds.labels(self.spec.name).set(count)

    async def _publish(self, events: Sequence[Envelope]) -> None:
        records: list[Record] = []
        for event in events:
            brand = self._brand_of(event)
            self._follow_brand(event, brand)
            stamp = tuple(Stamp(self.operator, brand).headers())
            kind: str = event.type  # type: ignore[attr-defined]
            records.append(Record(self.topic_of(event.TOPIC), event.key, dump(event), kind, stamp))
            log.debug(
                "published",
                event_type=kind,
                round_id=getattr(event, "round_id", None),
                key=event.key,
                brand=brand,
            )
        await self.outbox.send(records)
        for event in events:
            if event.TOPIC in self.spec.book_roles:
                self._fold_book(event)
            elif event.TOPIC in self.spec.state_roles:
                self.state = self.spec.evolve(self.state, event)

    async def _poison(self, message: Envelope, origin: Origin, error: Exception) -> None:
        ctx = Context(
            now=self.clock(), cause_id=message.event_id, seed=f"poison/{self._seed(origin)}"
        )
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
            now=self.clock(), cause_id=_safe_id(origin.seed) or "record", seed=self._seed(origin)
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
