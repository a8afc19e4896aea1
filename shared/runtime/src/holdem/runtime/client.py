"""An operator's side of the game over Kafka: send commands, follow round and wallet events."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from holdem.core.contracts import (
    Command,
    ContractError,
    Message,
    RoundVoided,
    Settled,
    dump,
    parse,
)
from holdem.runtime.topics import Topics

TERMINAL: tuple[type[Message], ...] = (Settled, RoundVoided)
FETCH_WAIT_MS = 20


class StalledError(TimeoutError):
    """An expected event did not arrive within its bound."""


@dataclass
class Watch:
    """The events of one round (or one command) as they arrive, for one waiter."""

    key: str
    queue: asyncio.Queue[Message] = field(default_factory=asyncio.Queue)
    seen: list[Message] = field(default_factory=list)
    _passed: list[Message] = field(default_factory=list)  # arrived, not yet asked for

    async def until(self, *kinds: type[Message], within_s: float) -> Message:
        """The next event of one of ``kinds``; a terminal event of the round always ends the
        wait, since nothing follows it. Events of other kinds are kept for later waits (the
        rounds and wallet topics are not ordered between them). StalledError after
        ``within_s`` seconds."""
        wanted = (*kinds, *TERMINAL)
        for index, event in enumerate(self._passed):
            if isinstance(event, wanted):
                return self._passed.pop(index)
        try:
            async with asyncio.timeout(within_s):
                while True:
                    event = await self.queue.get()
                    self.seen.append(event)
                    if isinstance(event, wanted):
                        return event
                    self._passed.append(event)
        except TimeoutError:
            names = ", ".join(kind.__name__ for kind in kinds)
            got = [type(e).__name__ for e in self.seen]
            raise StalledError(f"{self.key}: no {names} in {within_s:.0f}s (saw {got})") from None


class Operator:
    """Sends commands keyed by player_id; routes committed round events by round_id and wallet
    events by command_id to whoever watches them. Reads from the topics' ends at start."""

    def __init__(self, bootstrap: str, topics: Topics, partitions: int) -> None:
        self.topics = topics
        self._roles = {topics.rounds: "rounds", topics.wallet: "wallet"}
        self._assignment = [TopicPartition(t, p) for t in self._roles for p in range(partitions)]
        self._producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, linger_ms=0
        )
        self._consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=None,
            enable_auto_commit=False,
            isolation_level="read_committed",  # an aborted transaction's events never happened
            # A read_committed fetch is not woken by a transaction's commit marker, so it waits
            # the whole fetch_max_wait_ms (default 500) whenever it arrives before the commit.
            fetch_max_wait_ms=FETCH_WAIT_MS,
        )
        self._watches: dict[str, Watch] = {}
        self._router: asyncio.Task[None] | None = None
        self.events_seen = 0

    async def start(self) -> None:
        await self._producer.start()
        await self._consumer.start()
        self._consumer.assign(self._assignment)
        # Positions fixed before any command is sent, so no answer can slip past the reader.
        ends = await self._consumer.end_offsets(self._assignment)
        for tp, offset in ends.items():
            self._consumer.seek(tp, offset)
        self._router = asyncio.create_task(self._route(), name="operator-router")

    async def stop(self) -> None:
        if self._router is not None:
            self._router.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._router
        await self._consumer.stop()
        await self._producer.stop()

    async def __aenter__(self) -> Operator:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    def watch(self, key: str) -> Watch:
        """Start collecting the events for ``round:<id>`` or ``command:<id>``: before sending."""
        watch = self._watches[key] = Watch(key)
        return watch

    def forget(self, key: str) -> None:
        self._watches.pop(key, None)

    async def send(self, command: Command) -> None:
        """Publish one command on the commands topic, acknowledged by all in-sync replicas."""
        await self._producer.send_and_wait(
            self.topics.commands, value=dump(command), key=command.player_id.encode()
        )

    async def _route(self) -> None:
        while True:
            batches = await self._consumer.getmany(timeout_ms=200)
            for tp, records in batches.items():
                for record in records:
                    if record.value is not None:
                        self._deliver(self._roles[tp.topic], record.value)

    def _deliver(self, role: str, raw: bytes) -> None:
        try:
            event: Any = parse(role, raw)
        except ContractError:
            return  # not for the operator to judge; the audit reads every record
        self.events_seen += 1
        for key in _keys_of(event):
            watch = self._watches.get(key)
            if watch is not None:
                watch.queue.put_nowait(event)


def _keys_of(event: Any) -> list[str]:
    """Round events and a round's money movements go to the round's watcher; a deposit's or
    withdrawal's answer to the command's."""
    if event.round_id is not None:
        return [f"round:{event.round_id}"]
    command_id = getattr(event, "command_id", None)
    return [f"command:{command_id}"] if command_id is not None else []
