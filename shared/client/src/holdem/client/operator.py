"""The operator's connection to the game: send commands, route committed events to waiters.

One ``Operator`` holds one idempotent producer and one ``read_committed`` consumer of the rounds
and wallet topics (every decision of a service is one Kafka transaction: an aborted one's events
never reach a waiter). Waiters register a ``Watch`` for ``round:<round_id>`` or
``command:<command_id>`` *before* sending, so no answer can slip past them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from holdem.client.commands import new_id, partition_for
from holdem.client.promotions import cancel_free_hands as _cancel_free_hands
from holdem.client.promotions import credit_promo as _credit_promo
from holdem.client.promotions import grant_free_hands as _grant_free_hands
from holdem.client.protection import ProtectionCommands
from holdem.client.watch import StalledError as StalledError  # the SDK's name for it
from holdem.client.watch import Watch
from holdem.core.contracts import (
    BetRejected,
    ChangeTable,
    CloseTable,
    Command,
    CommandRejected,
    ContractError,
    CreateTable,
    DeckForced,
    DeckForceRejected,
    Envelope,
    ForceNextDeck,
    Message,
    PromoRejected,
    ProtectionRejected,
    SessionRejected,
    TableChanged,
    TableClosed,
    TableCommand,
    TableEvent,
    TableOpened,
    TableRejected,
    TableTerms,
    WalletRejected,
    dump,
    parse,
)
from holdem.core.contracts.wallet import WalletEvent
from holdem.core.wire.connection import KafkaConnection, start_or_close
from holdem.core.wire.headers import Stamp, operator_of_prefix
from holdem.core.wire.topics import Topics, topics_from_env

# A read_committed fetch is not woken by a transaction's commit marker, so it waits the whole
# fetch_max_wait_ms (default 500) whenever it arrives before the commit: keep it short.
FETCH_WAIT_MS = 20


class TableRefused(Exception):
    """An admin table command the game refused; ``reason`` is the stable code."""

    def __init__(self, event: TableRejected) -> None:
        super().__init__(f"{event.type}: {event.reason.value} {event.detail}".strip())
        self.event = event
        self.reason = event.reason


class Refused(Exception):
    """A command the game refused: ``event`` is the rejection, ``reason`` its stable code."""

    def __init__(
        self,
        event: BetRejected
        | CommandRejected
        | WalletRejected
        | SessionRejected
        | DeckForceRejected
        | PromoRejected
        | ProtectionRejected,
    ) -> None:
        super().__init__(f"{event.type}: {event.reason.value} {event.detail}".strip())
        self.event = event
        self.reason = event.reason


class Operator(ProtectionCommands):
    """Sends commands keyed by player_id; routes committed round events by round_id and wallet
    events by command_id to whoever watches them. Reads from the topics' ends at start.

    ``connection`` defaults to ``KafkaConnection.from_env()`` (the ``HOLDEM_KAFKA_*`` variables),
    ``topics`` to ``topics_from_env()``; ``partitions`` is read from the broker when not given.

    ``send_timeout_s`` bounds how long ``send`` waits for the broker to acknowledge a command
    (aiokafka's ``request_timeout_ms``, 40 s by default) before it raises ``KafkaTimeoutError``;
    a client that must ride out a broker restart gives it longer. What was not acknowledged may
    still have arrived: resend it with the same ``command_id`` (one effect, guide section 8).

    Every command carries the ``operator`` header (ADR 021): ``operator_id``, by default the
    tenant the topics' prefix names (``default`` without one), and the ``brand`` header when a
    brand is given (here for every command, or per ``send``). A round's records carry the brand
    of the bet that started it.

    >>> Operator(KafkaConnection("127.0.0.1:9092")).topics.commands
    'holdem.commands'
    >>> client = Operator(KafkaConnection("h:9092"), Topics().with_prefix("acme"), brand="acme-eu")
    >>> client.stamp().headers()
    [('operator', b'acme'), ('brand', b'acme-eu')]
    """

    def __init__(
        self,
        connection: KafkaConnection | None = None,
        topics: Topics | None = None,
        partitions: int | None = None,
        *,
        operator_id: str | None = None,
        brand: str | None = None,
        send_timeout_s: float = 40.0,
    ) -> None:
        if not send_timeout_s > 0:
            raise ValueError(f"send_timeout_s must be positive: {send_timeout_s}")
        self.connection = connection or KafkaConnection.from_env()
        self.send_timeout_s = send_timeout_s
        self.topics = topics or topics_from_env()
        self.partitions = partitions
        self.operator_id = operator_id or operator_of_prefix(self.topics.prefix)
        self.brand = brand
        self._roles = {
            self.topics.rounds: "rounds",
            self.topics.wallet: "wallet",
            self.topics.tables: "tables",  # the answers to the admin's table commands
        }
        # aiokafka clients bind to the running loop: they are made in start().
        self._producer: AIOKafkaProducer | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._watches: dict[str, Watch] = {}
        self._streams: list[asyncio.Queue[Message]] = []
        self._router: asyncio.Task[None] | None = None
        self.events_seen = 0

    def _producer_kwargs(self) -> dict[str, Any]:
        return {
            **self.connection.kwargs(),
            "acks": "all",
            "enable_idempotence": True,
            "linger_ms": 0,
            "request_timeout_ms": round(self.send_timeout_s * 1000),
        }

    def _consumer_kwargs(self) -> dict[str, Any]:
        return {
            **self.connection.kwargs(),
            "group_id": None,
            "enable_auto_commit": False,
            "isolation_level": "read_committed",
            "fetch_max_wait_ms": FETCH_WAIT_MS,
        }

    async def start(self) -> None:
        """Connect, find the partitions, and start routing; nothing left open if that fails."""
        try:
            await self._start()
        except BaseException:
            await self.stop()
            raise

    async def _start(self) -> None:
        producer = self._producer = AIOKafkaProducer(**self._producer_kwargs())
        consumer = self._consumer = AIOKafkaConsumer(**self._consumer_kwargs())
        await producer.start()
        await consumer.start()
        if self.partitions is None:
            self.partitions = len(await producer.partitions_for(self.topics.commands))
        assignment = [TopicPartition(t, p) for t in self._roles for p in range(self.partitions)]
        consumer.assign(assignment)
        # Positions fixed before any command is sent, so no answer can slip past the reader.
        for tp, offset in (await consumer.end_offsets(assignment)).items():
            consumer.seek(tp, offset)
        self._router = asyncio.create_task(self._route(), name="operator-router")

    async def stop(self) -> None:
        await stop_all(self._router, self._consumer, self._producer)

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

    def stamp(self, brand: str | None = None) -> Stamp:
        """The operator and brand headers of what this client sends (``brand``: this one's)."""
        return Stamp(self.operator_id, brand or self.brand)

    async def send(self, command: Command, *, brand: str | None = None) -> None:
        """Publish one command on the commands topic keyed by its player_id (murmur2, see
        ``holdem.client.commands``), acknowledged by all in-sync replicas, with the operator
        header and the brand header (``brand``, else the client's, if any)."""
        assert self._producer is not None, "start() the operator first"
        await self._producer.send_and_wait(
            self.topics.commands,
            value=dump(command),
            key=command.player_id.encode(),
            headers=self.stamp(brand).headers(),
        )

    async def create_table(
        self, table_id: str, terms: TableTerms, *, command_id: str | None = None
    ) -> TableOpened:
        """Open table ``table_id`` at version 1 (admin principal: the admin topic is its)."""
        opened = await self._table(CreateTable, table_id, command_id, terms=terms)
        assert isinstance(opened, TableOpened)
        return opened

    async def change_table(
        self,
        table_id: str,
        expected_version: int,
        terms: TableTerms,
        *,
        command_id: str | None = None,
    ) -> TableChanged:
        """New terms for rounds bet from now on; ``stale_version`` unless the table is still at
        ``expected_version``."""
        fields = {"expected_version": expected_version, "terms": terms}
        changed = await self._table(ChangeTable, table_id, command_id, **fields)
        assert isinstance(changed, TableChanged)
        return changed

    async def close_table(
        self, table_id: str, expected_version: int, *, command_id: str | None = None
    ) -> TableClosed:
        """No new round at the table; its open rounds finish under their terms."""
        fields = {"expected_version": expected_version}
        closed = await self._table(CloseTable, table_id, command_id, **fields)
        assert isinstance(closed, TableClosed)
        return closed

    async def _table(
        self, model: type[TableCommand], table_id: str, command_id: str | None, **fields: Any
    ) -> TableEvent:
        assert self._producer is not None, "start() the operator first"
        cmd = model(
            event_id=new_id(),
            command_id=command_id or new_id(),
            table_id=table_id,
            occurred_at=datetime.now(UTC),
            **fields,
        )
        producer = self._producer

        async def publish() -> None:
            headers = self.stamp().headers()
            await producer.send_and_wait(
                self.topics.admin, value=dump(cmd), key=table_id.encode(), headers=headers
            )

        answer = await self._answer(cmd.command_id, publish, TableEvent, TableRejected)
        if isinstance(answer, TableRejected):
            raise TableRefused(answer)
        assert isinstance(answer, TableEvent)
        return answer

    async def force_next_deck(
        self, player_id: str, cards: Sequence[str], *, command_id: str | None = None
    ) -> DeckForced:
        """The first ``cards`` (1 to 9 card texts, e.g. ``"As"``, in deal order: the player's
        two, the dealer's two, the flop, the turn, the river) of the player's next play-money
        round; the rest of the deck is shuffled as ever, and the round's events say ``forced``.
        Only a dealer in test mode takes it (ADR 030): ``Refused`` (``test_mode_only``)
        otherwise; bad cards never leave here (the model refuses them, a ValidationError)."""
        cmd = ForceNextDeck(
            event_id=new_id(),
            command_id=command_id or new_id(),
            player_id=player_id,
            occurred_at=datetime.now(UTC),
            cards=tuple(cards),
        )
        answer = await self._answer(
            cmd.command_id, lambda: self.send(cmd), DeckForced, DeckForceRejected
        )
        if isinstance(answer, DeckForceRejected):
            raise Refused(answer)
        assert isinstance(answer, DeckForced)
        return answer

    async def _answer(
        self, command_id: str, publish: Callable[[], Awaitable[None]], *kinds: type[Envelope]
    ) -> Any:
        """The first answer of one of ``kinds`` to the command ``publish`` sends (watched for
        before it is sent, so none is missed); StalledError after a minute."""
        watch = self.watch(f"command:{command_id}")
        try:
            await publish()
            return await watch.until(*kinds, within_s=60.0)
        finally:
            self.forget(watch.key)

    async def stream(self) -> AsyncIterator[Message]:
        """Every committed round and wallet event from now on, in arrival order per partition,
        until the caller stops iterating."""
        queue: asyncio.Queue[Message] = asyncio.Queue()
        self._streams.append(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            self._streams.remove(queue)

    async def balance(self, player_id: str, currency: str = "EUR") -> int | None:
        """The player's available balance after their last committed wallet movement, None if
        they have none. Reads the player's wallet partition from its start: fine for a table,
        too slow for a lobby (``holdem.client.queries.QueryClient.balance`` asks the query
        service)."""
        found: int | None = None
        for event in await self.wallet_log(player_id):
            if isinstance(event, WalletEvent) and event.currency == currency:
                found = event.available
        return found

    async def wallet_log(self, player_id: str) -> list[Message]:
        """Every committed wallet record of the player, read from his partition's start."""
        assert self.partitions is not None, "start() the operator first"
        tp = TopicPartition(self.topics.wallet, partition_for(player_id, self.partitions))
        reader = AIOKafkaConsumer(**self._consumer_kwargs(), auto_offset_reset="earliest")
        await start_or_close(reader)
        try:
            reader.assign([tp])
            end = (await reader.end_offsets([tp]))[tp]
            reader.seek(tp, (await reader.beginning_offsets([tp]))[tp])
            found: list[Message] = []
            while await reader.position(tp) < end:
                for record in (await reader.getmany(tp, timeout_ms=200)).get(tp, []):
                    event = _parse("wallet", record.value)
                    if isinstance(event, Message) and event.player_id == player_id:
                        found.append(event)
            return found
        finally:
            await reader.stop()

    # Promotions (ADR 029): ``operator.grant_free_hands(players, table_id=..., hands=...,
    # ante=..., expires_at=..., campaign_id=...)``, ``operator.credit_promo(player_id, amount,
    # campaign_id=..., reason=...)``, ``operator.cancel_free_hands(player_id, campaign_id)``;
    # see holdem.client.promotions.
    grant_free_hands = _grant_free_hands
    credit_promo = _credit_promo
    cancel_free_hands = _cancel_free_hands

    async def _route(self) -> None:
        assert self._consumer is not None
        while True:
            batches = await self._consumer.getmany(timeout_ms=200)
            for tp, records in batches.items():
                for record in records:
                    event = _parse(self._roles[tp.topic], record.value)
                    if event is not None:
                        self._deliver(event)

    def _deliver(self, event: Any) -> None:
        self.events_seen += 1
        for queue in self._streams:
            queue.put_nowait(event)
        for key in _keys_of(event):
            watch = self._watches.get(key)
            if watch is not None:
                watch.queue.put_nowait(event)


async def stop_all(
    task: asyncio.Task[None] | None, *clients: AIOKafkaConsumer | AIOKafkaProducer | None
) -> None:
    """Cancel a reader task and stop the clients it used (those that were made)."""
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    for client in clients:
        if client is not None:
            await client.stop()


def _parse(role: str, raw: bytes | None) -> Any:
    if raw is None:
        return None
    try:
        return parse(role, raw)
    except ContractError:
        return None  # not for the operator to judge; the audit reads every record


def _keys_of(event: Any) -> list[str]:
    """Round events and a round's money movements go to the round's watcher; a deposit's or
    withdrawal's answer to the command's."""
    round_id = getattr(event, "round_id", None)  # a table's events have none
    if round_id is not None:
        return [f"round:{round_id}"]
    command_id = getattr(event, "command_id", None)
    return [f"command:{command_id}"] if command_id is not None else []
