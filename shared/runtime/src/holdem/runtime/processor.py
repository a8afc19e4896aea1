"""The processing loop every service shares: parse, fold, decide, publish atomically, fold own
events; state rebuilt from the log before anything is handled. See docs/services-design.md."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

import structlog

from holdem.core.contracts import (
    COMMAND_TYPES,
    ContractError,
    Malfunction,
    Message,
    MessageRejected,
    Reason,
    dump,
    parse,
)
from holdem.core.decider import Context
from holdem.runtime.metrics import Metrics
from holdem.runtime.outbox import Outbox, Record
from holdem.runtime.topics import Topics

S = TypeVar("S")
log = structlog.get_logger(__name__)
ROLES = ("commands", "rounds", "wallet", "vault", "rejected")
DECIDE_ATTEMPTS = 3


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Spec(Generic[S]):
    """What makes a service: its decider and which topics it reads and folds."""

    name: str
    initial_state: Callable[[], S]
    evolve: Callable[[S, Any], S]
    decide: Callable[[S, Any, Context], list[Message]]
    inputs: tuple[str, ...]  # topic roles consumed
    state_roles: tuple[str, ...]  # topic roles whose events are folded into the state
    outputs: tuple[str, ...] = ()  # topic roles it publishes to (documents the AsyncAPI)
    commands: frozenset[str] = frozenset()  # command types this service owns
    rejects_unreadable: frozenset[str] = frozenset()  # roles whose unreadable records it reports
    make_context: Callable[[Message, datetime], Context] | None = None
    tick: Callable[[S, Context], list[Message]] | None = None  # periodic decisions (timeouts)
    tick_interval_s: float = 1.0
    open_rounds: Callable[[S], int] | None = None
    on_handled: Callable[[S, Message, list[Message]], None] | None = None  # service metrics


@dataclass
class Processor(Generic[S]):
    """Holds one service's state and applies the processing model to each record."""

    spec: Spec[S]
    topics: Topics
    outbox: Outbox
    metrics: Metrics
    clock: Callable[[], datetime] = utc_now
    state: S = field(init=False)
    lock: asyncio.Lock = field(init=False, default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        self.state = self.spec.initial_state()
        self._role_of = {getattr(self.topics, role): role for role in ROLES}

    def topic_of(self, role: str) -> str:
        name: str = getattr(self.topics, role)
        return name

    def reset(self) -> None:
        self.state = self.spec.initial_state()

    def fold(self, topic: str, raw: bytes) -> None:
        """Replay path: fold one committed record; what does not parse was never acted on."""
        try:
            message = parse(self._role_of[topic], raw)
        except ContractError:
            return
        self.state = self.spec.evolve(self.state, message)

    async def handle(self, topic: str, partition: int, offset: int, raw: bytes) -> None:
        role = self._role_of[topic]
        try:
            message = parse(role, raw)
        except ContractError as error:
            if self._reports_unreadable(role, raw):
                await self._reject(topic, partition, offset, raw, error.reason, error.detail)
                await self.outbox.flush()
            return
        async with self.lock:
            if role in self.spec.state_roles:
                self.state = self.spec.evolve(self.state, message)
            await self._decide_and_publish(message, (topic, partition, offset, raw))
        await self.outbox.flush()

    async def run_tick(self) -> None:
        """One periodic decision (timeouts, watchdog), serialised with record handling."""
        if self.spec.tick is None:
            return
        async with self.lock:
            now = self.clock()
            ctx = Context(now=now, cause_id=f"tick:{self.spec.name}:{now.isoformat()}")
            events = self.spec.tick(self.state, ctx)
            await self._publish(events)
            self.metrics.observe_events(self.spec.name, events)
            self._update_open_rounds()
        await self.outbox.flush()

    async def _decide_and_publish(
        self, message: Message, origin: tuple[str, int, int, bytes]
    ) -> None:
        now = self.clock()
        make = self.spec.make_context or _default_context
        for attempt in range(1, DECIDE_ATTEMPTS + 1):
            try:
                events = self.spec.decide(self.state, message, make(message, now))
                break
            except Exception as error:  # a poison message must not block the partition
                log.exception("decide failed", attempt=attempt, event_type=message.type)  # type: ignore[attr-defined]
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
            self.metrics.open_rounds.labels(self.spec.name).set(self.spec.open_rounds(self.state))

    async def _publish(self, events: Sequence[Message]) -> None:
        records: list[Record] = [(self.topic_of(e.TOPIC), e.player_id, dump(e)) for e in events]
        await self.outbox.send(records)
        for event in events:
            if event.TOPIC in self.spec.state_roles:
                self.state = self.spec.evolve(self.state, event)
            log.info(
                "published",
                event_type=event.type,  # type: ignore[attr-defined]
                round_id=event.round_id,
                player_id=event.player_id,
            )

    async def _poison(
        self, message: Message, origin: tuple[str, int, int, bytes], error: Exception
    ) -> None:
        ctx = Context(now=self.clock(), cause_id=message.event_id)
        events: list[Message] = [_rejection(self.spec.name, ctx, message.player_id, origin, error)]
        if message.round_id is not None:
            events.append(
                Malfunction(
                    **ctx.envelope(message.player_id, message.round_id),
                    source=self.spec.name,
                    reason=f"processing_failed: {type(error).__name__}",
                )
            )
        await self._publish(events)
        self.metrics.observe(self.spec.name, message, events, self.clock())

    async def _reject(
        self, topic: str, partition: int, offset: int, raw: bytes, reason: Reason, detail: str
    ) -> None:
        ctx = Context(now=self.clock(), cause_id=f"{topic}:{partition}:{offset}")
        player = _lenient_field(raw, "player_id") or "unknown"
        event = MessageRejected(
            **ctx.envelope(player[:64] if _is_id(player) else "unknown"),
            service=self.spec.name,
            reason=reason,
            detail=detail[:2000],
            source_topic=topic,
            source_partition=partition,
            source_offset=offset,
            raw=raw.decode("utf-8", errors="replace")[:4000],
        )
        await self._publish([event])
        self.metrics.rejected.labels(self.spec.name, reason.value).inc()
        log.warning("rejected", reason=reason.value, detail=detail, topic=topic, offset=offset)

    def _reports_unreadable(self, role: str, raw: bytes) -> bool:
        if role == "commands":
            kind = _lenient_field(raw, "type")
            if kind in COMMAND_TYPES:
                return kind in self.spec.commands
        return role in self.spec.rejects_unreadable


def _default_context(message: Message, now: datetime) -> Context:
    return Context(now=now, cause_id=message.event_id, correlation_id=message.correlation_id)


def _rejection(
    service: str, ctx: Context, player: str, origin: tuple[str, int, int, bytes], error: Exception
) -> MessageRejected:
    topic, partition, offset, raw = origin
    return MessageRejected(
        **ctx.envelope(player),
        service=service,
        reason=Reason.PROCESSING_FAILED,
        detail=f"{type(error).__name__}: {error}"[:2000],
        source_topic=topic,
        source_partition=partition,
        source_offset=offset,
        raw=raw.decode("utf-8", errors="replace")[:4000],
    )


def _lenient_field(raw: bytes, name: str) -> str | None:
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    found = value.get(name) if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


def _is_id(text: str) -> bool:
    return 0 < len(text) <= 64 and all(c.isalnum() or c in "._:@-" for c in text)
