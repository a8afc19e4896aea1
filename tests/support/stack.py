"""Dealer, wallet and settlement in this process on a real broker: forced decks, an observer."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from holdem.core.cards import Card
from holdem.core.contracts import Message, dump
from holdem.core.wire.connection import KafkaConnection, start_or_close
from holdem.core.wire.topics import Topics
from holdem.dealer.app import create_app as dealer_app
from holdem.dealer.app import csprng_deck
from holdem.dealer.settings import DealerSettings
from holdem.query.app import create_app as query_app
from holdem.query.settings import QuerySettings
from holdem.runtime.app import ServiceApp
from holdem.runtime.topic_setup import ensure_topics
from holdem.settlement.app import create_app as settlement_app
from holdem.settlement.settings import SettlementSettings
from holdem.wallet.app import create_app as wallet_app
from holdem.wallet.settings import WalletSettings
from support.dealer import VAULT_KEYS
from support.invariants import ROLES, Record, violations
from support.kafka import Cluster
from support.ledger_check import Balances

WAIT_S = 30.0  # the bound of every wait: a lost event fails the test, it never hangs it
QUIET_S = 0.5  # after the invariants hold, how long a late duplicate gets to show up
SERVICES = ("wallet", "dealer", "settlement")


class ForcedDecks:
    """The dealer's deck source: queued decks in order, then CSPRNG decks when none is queued."""

    def __init__(self) -> None:
        self._queue: deque[tuple[Sequence[int], bytes]] = deque()

    def push(self, deck: Sequence[Card], salt: bytes) -> None:
        self._queue.append((tuple(deck), salt))

    def __call__(self) -> tuple[Sequence[int], bytes]:
        return self._queue.popleft() if self._queue else csprng_deck()

    def __len__(self) -> int:
        return len(self._queue)


class Observer:
    """Reads every committed record of the five topics, from the beginning, as they arrive
    (as admin: the vault is readable by the dealer alone)."""

    def __init__(self, admin: KafkaConnection, topics: Topics) -> None:
        self.records: list[Record] = []
        self._roles = {getattr(topics, role): role for role in ROLES}
        self._consumer = AIOKafkaConsumer(
            **admin.kwargs(),
            isolation_level="read_committed",
            enable_auto_commit=False,
            auto_offset_reset="earliest",  # a reset in flight from assign() must not skip records
        )
        self._task: asyncio.Task[None] | None = None

    async def start(self, partitions: int) -> None:
        await start_or_close(self._consumer)
        assignment = [TopicPartition(t, p) for t in self._roles for p in range(partitions)]
        self._consumer.assign(assignment)
        for tp, offset in (await self._consumer.beginning_offsets(assignment)).items():
            self._consumer.seek(tp, offset)
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            batches = await self._consumer.getmany(timeout_ms=100)
            for tp, batch in batches.items():
                for r in batch:
                    role = self._roles[tp.topic]
                    raw = r.value or b""
                    self.records.append(
                        Record.of(role, r.partition, r.offset, raw, r.timestamp, r.headers)
                    )

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._consumer.stop()

    def of(self, players: Iterable[str]) -> list[Record]:
        """The records of these players (by the record's player_id), and the tables' (which
        their bets name)."""
        wanted = set(players)
        return [
            r
            for r in self.records
            if r.message is not None
            and (r.role == "tables" or getattr(r.message, "player_id", None) in wanted)
        ]


@dataclass
class Stack:
    """The three services on one topic prefix, each as its own principal; tests isolate
    themselves by player id."""

    kafka: Cluster
    topics: Topics
    partitions: int = 3
    snapshot_interval_s: float = 0.5  # often, so the tests restart from snapshots
    decks: ForcedDecks = field(default_factory=ForcedDecks)
    services: dict[str, ServiceApp] = field(default_factory=dict)
    observer: Observer | None = None
    # A tenant's own operator principal (holdem.ops.tenants); its ACLs are the tenant's.
    operator: KafkaConnection | None = None
    wallet_settings: dict[str, Any] = field(default_factory=dict)  # e.g. the seamless mode
    _producer: AIOKafkaProducer | None = None  # the operator's
    _forger: AIOKafkaProducer | None = None  # admin's, standing in for a service

    @property
    def prefix(self) -> str:
        return self.topics.commands.removesuffix(".holdem.commands")

    def create(self, name: str) -> ServiceApp:
        common: dict[str, Any] = {
            **self.kafka.settings(name),
            "topic_prefix": self.prefix,
            "partitions": self.partitions,
            "metrics_port": 0,
            "snapshot_interval_s": self.snapshot_interval_s,
        }
        if name == "wallet":
            table: dict[str, Any] = {
                "table_ante_min": 10,
                "table_ante_max": 1_000,
                "table_bonus_max": 500,
            }
            return wallet_app(WalletSettings(**common, **table, **self.wallet_settings))
        if name == "dealer":
            # Long timers: a test's slow broker must not turn into an auto-fold or a watchdog void.
            timers: dict[str, Any] = {"decision_timeout_s": 300.0, "stuck_after_s": 300.0}
            settings = DealerSettings(**common, **timers, dealer_vault_keys=VAULT_KEYS)
            return dealer_app(settings, new_deck=self.decks)
        if name == "query":  # not in SERVICES: the tests that ask start it
            return query_app(QuerySettings(**common))
        return settlement_app(SettlementSettings(**common))

    async def start(self, *names: str) -> None:
        """Start these services and wait until each is ready (its state rebuilt, a member of
        its group), as a deployment's health check would: a command sent before that is read
        by a service still rebuilding, and a query answered from a state behind the log.
        Started side by side, as a deployment's processes are (one after the other, each test
        waited the sum of their starts: about 1.3 s more a test, CI's minutes)."""
        chosen = [(name, self.create(name)) for name in names or SERVICES]
        results = await asyncio.wait_for(
            asyncio.gather(*(service.start() for _, service in chosen), return_exceptions=True),
            WAIT_S,
        )
        started = []
        for (name, service), result in zip(chosen, results, strict=True):
            if not isinstance(result, BaseException):
                self.services[name] = service  # stopped by close(), whatever failed beside it
                started.append(service)
        for result in results:
            if isinstance(result, BaseException):
                raise result
        async with asyncio.timeout(WAIT_S):
            while not all(service.loop.healthy() for service in started):
                await asyncio.sleep(0.05)

    async def stop(self, *names: str) -> None:
        for name in names or tuple(self.services):
            service = self.services.pop(name)
            await asyncio.wait_for(service.stop(), WAIT_S)

    async def restart(self, name: str) -> None:
        """A fresh instance (new, empty state) that must rebuild everything from the log."""
        await self.stop(name)
        await self.start(name)

    async def open(self) -> None:
        await ensure_topics(self.kafka.admin, self.topics, self.partitions, wait=WAIT_S)
        if self.operator is None:
            seamless = self.wallet_settings.get("wallet_mode") == "seamless"
            await self.kafka.authorize(self.prefix, seamless=seamless)
        operator = self.operator or self.kafka.operator
        self._producer = AIOKafkaProducer(**operator.kwargs(), acks="all")
        await self._producer.start()
        self._forger = AIOKafkaProducer(**self.kafka.admin.kwargs(), acks="all")
        await self._forger.start()
        self.observer = Observer(self.kafka.admin, self.topics)
        await self.observer.start(self.partitions)
        await self.start()

    async def close(self) -> None:
        await self.stop()
        if self.observer is not None:
            await self.observer.stop()
        for producer in (self._producer, self._forger):
            if producer is not None:
                await producer.stop()

    async def send(self, message: Message, role: str | None = None) -> None:
        """Publish as the operator (commands) or as another service would (``role``: as admin,
        since the operator may not write there)."""
        producer = self._forger if role else self._producer
        assert producer is not None
        topic = getattr(self.topics, role or message.TOPIC)
        await producer.send_and_wait(topic, dump(message), key=message.player_id.encode())

    def records(self, *players: str) -> list[Record]:
        assert self.observer is not None
        return self.observer.of(players)

    def events(self, player: str, role: str = "rounds") -> list[Any]:
        return [r.message for r in self.records(player) if r.role == role]

    async def wait_for(self, found: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
        """Poll ``found()`` until it returns something truthy; fail naming ``what`` if it never
        does within ``timeout``."""
        deadline = time.monotonic() + timeout
        while not (result := found()):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {timeout}s waiting for {what}")
            await asyncio.sleep(0.05)
        return result

    async def event(self, player: str, kind: str, round_id: str | None = None) -> Any:
        """The first event of type ``kind`` (on any topic) for ``player`` and ``round_id``."""

        def first() -> Any:
            return next(
                (
                    r.message
                    for r in self.records(player)
                    if r.message.type == kind and round_id in (None, r.message.round_id)
                ),
                None,
            )

        return await self.wait_for(first, f"{kind} of {player}/{round_id}")

    def balances(self, *players: str) -> Balances:
        """The wallet's own view of these players' accounts (its processor state)."""
        processor = self.services["wallet"].processor
        return {
            (player, currency, str(mode)): (account.available, account.held)
            for player in players
            for (owner, currency, mode), account in processor.state_for(player).accounts.items()
            if owner == player
        }

    async def assert_sound(self, *players: str, timeout: float = WAIT_S) -> None:
        """Wait until the invariants hold for these players' records, then make sure they stay."""

        def broken() -> list[str]:
            return violations(self.records(*players), self.balances(*players))

        deadline = time.monotonic() + timeout
        while found := broken():
            if time.monotonic() > deadline:
                raise AssertionError("invariants broken:\n  " + "\n  ".join(found))
            await asyncio.sleep(0.1)
        await asyncio.sleep(QUIET_S)
        found = broken()
        assert not found, "invariants broken after a quiet period:\n  " + "\n  ".join(found)


@contextlib.asynccontextmanager
async def running_stack(kafka: Cluster, name: str, *extra: str) -> AsyncIterator[Stack]:
    """A Stack on fresh topics named after ``name``, snapshotting often, with the ``extra``
    services (e.g. "query") started too; closed on the way out."""
    running = Stack(kafka, Topics.unique(name), snapshot_interval_s=0.3)
    await running.open()
    try:
        await running.start(*extra)
        yield running
    finally:
        await running.close()
