"""What a service does with one record: check it, parse it, fold it into its partition's state,
decide, and hand the events to the outbox; and the same fold on the replay path. The batch loop
(``holdem.runtime.loop``) owns batches, transactions and assignments. See
docs/services-design.md.

No record can stall a partition: whatever goes wrong with one record, it ends on the dead-letter
topic (``holdem.runtime.dead_letter``) and the offset moves on. Only a failure of the service
itself (its producer cannot publish, or was fenced) escapes ``process``, as ``FatalError``."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

import structlog
from structlog.contextvars import bound_contextvars

from holdem.core.contracts.base import Envelope, Message, Reason, RecordReason
from holdem.core.contracts.records import ContractError, dump
from holdem.core.contracts.records import parse as parse_message
from holdem.core.decider import Context
from holdem.core.wire.headers import DEFAULT_OPERATOR, Headers, Stamp
from holdem.core.wire.partitioning import partition_for_key
from holdem.core.wire.topics import ROLES, Topics
from holdem.runtime.dead_letter import answers_for, poisoned, rejection, safe_id
from holdem.runtime.echoes import Echoes
from holdem.runtime.ingress import Origin, header_refusal, key_refusal, wanted
from holdem.runtime.metrics import CountersFactory, GameCounters, Metrics
from holdem.runtime.outbox import FatalError, Outbox
from holdem.runtime.partitions import Partition, PartitionStore
from holdem.runtime.snapshots import Codec
from holdem.runtime.stamps import Stamps
from holdem.runtime.transport import Record

S = TypeVar("S")
log = structlog.get_logger(__name__)
__all__ = ["Origin", "Partition", "Processor", "Spec"]


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
    on_handled: Callable[[S, Any, Any], None] | None = None  # (state, input, events): logs
    # The service's own counters (its game facts), built once with the process's metrics.
    counters: CountersFactory | None = None
    # What it publishes besides the dead letter when its decision on a message raised (a rounds
    # writer: holdem.core.contracts.rounds.broken_round, the round's Malfunction).
    on_failure: Callable[[Context, Any, Exception], Sequence[Envelope]] | None = None
    # The message types it folds or decides on; records whose type header names another type
    # are skipped unparsed (None: parse everything).
    reads: frozenset[str] | None = None
    snapshot: Codec | None = None  # how its state is snapshotted (None: always a full replay)
    # Roles read whole (every partition) into one book shared by all partitions' decisions,
    # e.g. the table book: replayed before the service is ready, kept current (loop.BookTail),
    # and fed its own events as they are published. ``fold_book`` must be idempotent.
    book_roles: tuple[str, ...] = ()
    fold_book: Callable[[Any], None] | None = None
    # Called whenever the book has been read to its end (start, every rebuild) and after each
    # batch its tail folds: what it raises is fatal (the service exits non-zero), so a service
    # can refuse to run on a book it must not serve (a test-mode dealer on real money, ADR 030).
    check_book: Callable[[], None] | None = None
    # How it folds an event its own decide just built, as built (None: ``evolve``): what
    # ``evolve`` checks of an event read from the log, it need not check again of its own, e.g.
    # settlement's recomputation of a Settled, or the dealer's opening of a vault record. Also
    # used for its own events coming back as echoes (the same objects). Must leave the state
    # as ``evolve`` would.
    evolve_own: Callable[[S, Any], S] | None = None


@dataclass
class Processor(Generic[S]):
    """One service's partitions and the steps every record goes through."""

    spec: Spec[S]
    topics: Topics
    outbox: Outbox
    metrics: Metrics
    clock: Callable[[], datetime] = utc_now
    # Partition count of every topic, for the wrong_partition check (None: not checked).
    partitions: int | None = None
    # The operator this deployment serves (ADR 021): the ``operator`` header of every record it
    # publishes; an input whose header names another is refused (wrong_operator).
    operator: str = DEFAULT_OPERATOR
    store: PartitionStore[S] = field(init=False)
    lock: asyncio.Lock = field(init=False, default_factory=asyncio.Lock)
    counters: GameCounters = field(init=False)
    # Its own events, by the bytes it published, until they come back on its inputs.
    echoes: Echoes = field(init=False, default_factory=Echoes)

    def __post_init__(self) -> None:
        self._role_of = {self.topics.name(role): role for role in ROLES}
        self.store = PartitionStore(self.spec.initial_state, self.spec.snapshot)
        self._echoed = frozenset(self.spec.inputs)  # roles its own events come back on
        self._evolve_own = self.spec.evolve_own or self.spec.evolve
        self.stamps = Stamps(self.operator)
        make = self.spec.counters
        self.counters = GameCounters() if make is None else make(self.metrics)
        if self.spec.open_rounds is not None:  # counted when scraped, not at every decision
            self.metrics.open_rounds.labels(self.spec.name).set_function(self._open_rounds)

    def partition(self, number: int) -> Partition[S]:
        """Partition ``number``, with a fresh state if it has none yet."""
        return self.store.partition(number)

    @property
    def parts(self) -> dict[int, Partition[S]]:
        return self.store.parts

    @property
    def states(self) -> dict[int, S]:
        return self.store.states

    def state_for(self, player_id: str) -> S:
        """The state that holds ``player_id`` (tests, tools)."""
        key = player_id.encode()
        return self.partition(partition_for_key(key, self.partitions or 1)).state

    def topic_of(self, role: str) -> str:
        return self.topics.name(role)

    def reset(self, partitions: Iterable[int] | None = None) -> None:
        """Forget the state of ``partitions`` (default: all)."""
        self.store.reset(partitions)
        self.echoes.clear()  # what it published before is parsed if it comes back

    def wants(self, topic: str, kind: bytes | None) -> bool:
        return wanted(self.spec.reads, kind)

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
        stamp = self.stamps.of(headers)
        if header_refusal(stamp, self.operator) is not None:
            return
        role = self._role_of[topic]
        try:
            message = parse_message(role, raw)
        except ContractError:
            return
        if key is not None and partition is not None and self._key_refusal(message, key, partition):
            return
        if role in self.spec.book_roles:
            self._fold_book(message)
            return
        part = self.partition(partition or 0)
        part.brands.follow(message, stamp.brand)
        part.state = self.spec.evolve(part.state, message)

    def fold_book(
        self, topic: str, raw: bytes, key: bytes | None, partition: int, headers: Headers = None
    ) -> None:
        """Fold one committed record of a book role (replay and tail): never a partition's
        state, whatever partition the record is on."""
        if self._role_of.get(topic) in self.spec.book_roles:
            self.fold(topic, raw, key, partition, headers)

    async def process(
        self,
        topic: str,
        partition: int,
        offset: int,
        raw: bytes,
        key: bytes | None = None,
        headers: Headers = None,
    ) -> None:
        """Process one record of a batch: the caller holds ``lock`` and commits the outbox.
        Never raises for anything the record did; ``FatalError`` when the service cannot
        publish (the caller must end the process)."""
        origin = Origin(topic, partition, offset, raw, key)
        part = self.partition(partition)
        stamp = self.stamps.of(headers)
        # The log lines written while handling a branded record name its brand (ADR 021).
        branded = stamp.brand is not None and stamp.problem() is None
        try:
            if branded:
                with bound_contextvars(brand=stamp.brand):
                    await self._process(part, origin, stamp)
            else:  # most records: no context to bind (a nullcontext per record cost too)
                await self._process(part, origin, stamp)
        except FatalError:
            raise
        except Exception as error:  # whatever broke, the record is dead-lettered, not retried
            log.exception("record failed", topic=topic, partition=partition, offset=offset)
            detail = f"{type(error).__name__}: {error}"
            await self._reject(
                part, origin, Reason.PROCESSING_FAILED, detail, stamp.brand if branded else None
            )

    async def tombstone(
        self, topic: str, partition: int, offset: int, key: bytes | None, headers: Headers = None
    ) -> None:
        """A record without a value (a tombstone) on an input topic: no client message is one,
        so the service that answers for the topic's unreadable records dead-letters it
        (``malformed``) and logs it; the others skip it, as every replay does."""
        if self._role_of[topic] not in self.spec.rejects_unreadable:
            return
        origin = Origin(topic, partition, offset, b"", key)
        detail = "a record without a value (tombstone): no message has a null body"
        await self._reject(self.partition(partition), origin, Reason.MALFORMED, detail)

    async def _process(self, part: Partition[S], origin: Origin, stamp: Stamp) -> None:
        role = self._role_of[origin.topic]
        refusal = header_refusal(stamp, self.operator)
        if refusal is not None:  # another operator's record, or headers we cannot trust:
            if self._answers_for(role, origin.raw):  # nothing of them is passed on
                await self._reject(part, origin, *refusal)
            return
        message = self.echoes.take(origin.topic, origin.key, origin.raw)  # its own, as built
        own = message is not None
        if message is None:
            try:
                message = parse_message(role, origin.raw)
            except ContractError as error:
                if self._answers_for(role, origin.raw):
                    await self._reject(part, origin, error.reason, error.detail, stamp.brand)
                return
        refusal = self._key_refusal(message, origin.key, origin.partition)
        if refusal is not None:
            if self._answers_for(role, origin.raw):
                await self._reject(part, origin, *refusal, stamp.brand)
            return
        part.brands.follow(message, stamp.brand)
        if role in self.spec.state_roles:
            evolve = self._evolve_own if own else self.spec.evolve
            part.state = evolve(part.state, message)
        await self._decide(part, message, origin, stamp.brand)

    async def _decide(
        self, part: Partition[S], message: Any, origin: Origin, brand: str | None
    ) -> None:
        now = self.clock()
        make = self.spec.make_context or _default_context
        try:  # decide is pure: what raises once raises again, so it is not retried
            ctx = make(message, now)
            ctx.seed = self._seed(origin)  # ids from where the input is, not from its ids
            events = self.spec.decide(part.state, message, ctx)
        except Exception as error:  # a poison message must not block the partition
            log.exception("decide failed", event_type=message.type)
            poison = Context(
                now=now, cause_id=message.event_id, seed=f"poison/{self._seed(origin)}"
            )
            also = self.spec.on_failure
            events = poisoned(self.spec.name, poison, message, origin, error, also)
            await self._publish(part, events, brand)
            self._count(events, message, now)
            return
        await self._publish(part, events, brand)
        self._count(events, message, now)
        self.counters.handled(part.state, message, events)
        if self.spec.on_handled is not None:
            self.spec.on_handled(part.state, message, events)

    async def run_tick(self, resumed_at: datetime | None = None) -> None:
        """One periodic decision (timeouts, watchdog), serialised with record handling;
        ``resumed_at``: when the pipeline last resumed making progress (``Context.resumed_at``)."""
        if self.spec.tick is None:
            return
        async with self.lock:
            now = self.clock()
            for number in sorted(self.store.parts):
                part = self.store.parts[number]
                cause = f"tick:{self.spec.name}:{number}:{now.isoformat()}"
                ctx = Context(now=now, cause_id=cause, resumed_at=resumed_at)
                events = self.spec.tick(part.state, ctx)
                await self._publish(part, events, None)  # a round's records carry its brand
                self._count(events)
        await self.outbox.flush()

    def _seed(self, origin: Origin) -> str:
        """What the ids of the events decided on ``origin`` derive from: the record's
        coordinates, which no client chooses, and this service, since several services read
        one record (the wallet and settlement both decide on a ``round.called``)."""
        return f"{self.spec.name}@{origin.seed}"

    def _key_refusal(
        self, message: Envelope, key: bytes | None, partition: int
    ) -> tuple[RecordReason, str] | None:
        return key_refusal(message, key, partition, self.partitions)

    def _answers_for(self, role: str, raw: bytes) -> bool:
        return answers_for(role, raw, self.spec.commands, self.spec.rejects_unreadable)

    def _fold_book(self, message: Envelope) -> None:
        if self.spec.fold_book is not None:
            self.spec.fold_book(message)

    def _count(
        self,
        events: Sequence[Envelope],
        cause: Envelope | None = None,
        now: datetime | None = None,
    ) -> None:
        """Count published ``events``: the pipeline's metrics (with the latency from ``cause``,
        if an input caused them, to ``now``: the decision's own clock read) and the service's
        own counters."""
        if cause is None:
            self.metrics.observe_events(self.spec.name, events)
        else:
            self.metrics.observe(self.spec.name, cause, events, now or self.clock())
        for event in events:
            self.counters.observe(event)

    def _open_rounds(self) -> float:
        """The open rounds of every partition, read at each scrape from the scraping thread: the
        partitions are copied first, and each service's count is a length or a number of its
        state (``Spec.open_rounds``), which the GIL reads whole."""
        count = self.spec.open_rounds
        if count is None:
            return 0.0
        return float(sum(count(part.state) for part in tuple(self.store.parts.values())))

    async def _publish(
        self, part: Partition[S], events: Sequence[Envelope], input_brand: str | None
    ) -> None:
        """Stamp and send ``events``, then fold the service's own into the partition's state
        (``Spec.evolve_own``: as built) or its book."""
        if not events:  # a record that decides nothing (about a third of a round's)
            return
        records: list[Record] = []
        debug = log.is_enabled_for(logging.DEBUG)
        for event in events:
            brand = part.brands.of(event, input_brand)
            part.brands.follow(event, brand)
            stamp = self.stamps.headers(brand)
            kind: str = event.type  # type: ignore[attr-defined]
            record = Record(self.topic_of(event.TOPIC), event.key, dump(event), kind, stamp)
            records.append(record)
            if event.TOPIC in self._echoed:
                self.echoes.remember(record.topic, record.key.encode(), record.value, event)
            if debug:  # its arguments cost, even when the line is dropped
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
                part.state = self._evolve_own(part.state, event)

    async def _reject(
        self,
        part: Partition[S],
        origin: Origin,
        reason: Reason | RecordReason,
        detail: str,
        brand: str | None = None,
    ) -> None:
        """Dead-letter one record with its reason."""
        seed = self._seed(origin)
        ctx = Context(now=self.clock(), cause_id=safe_id(origin.seed) or "record", seed=seed)
        event = rejection(self.spec.name, ctx, origin, reason, detail)
        await self._publish(part, [event], brand)
        self._count([event])
        log.warning(
            "rejected",
            reason=reason.value,
            detail=detail[:300],
            topic=origin.topic,
            partition=origin.partition,
            offset=origin.offset,
        )


def _default_context(message: Message, now: datetime) -> Context:
    return Context(now=now, cause_id=message.event_id, correlation_id=message.correlation_id)
