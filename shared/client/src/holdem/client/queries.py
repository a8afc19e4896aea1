"""Ask the query service (request/reply over Kafka): open round, balance, history, summaries,
a player's free-hand campaigns and his protection (limits, block, open sessions).

A ``QueryClient`` sends each query on the queries topic keyed by the player it is about, and
reads the replies partition of its own ``requester_id`` (replies are keyed by the requester),
from its end as of ``start()``: a reply is matched to its query by ``correlation_id``. A
refusal (unknown player, unknown round, fun history, ...) is raised as ``QueryRefusedError``.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from holdem.client.commands import new_id, partition_for
from holdem.client.operator import FETCH_WAIT_MS, stop_all
from holdem.client.watch import StalledError
from holdem.core.contracts import (
    BalanceQuery,
    BalanceReply,
    ContractError,
    HistoryQuery,
    HistoryReply,
    Mode,
    OpenRoundQuery,
    OpenRoundReply,
    PromotionsQuery,
    PromotionsReply,
    ProtectionQuery,
    ProtectionReply,
    QueryReason,
    QueryRefused,
    RoundSummaryQuery,
    RoundSummaryReply,
    dump,
    parse,
)
from holdem.core.contracts.queries import Language, Query, Reply
from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.headers import Stamp, operator_of_prefix
from holdem.core.wire.topics import Topics, topics_from_env

R = TypeVar("R", bound=Reply)
ANSWER_WITHIN_S = 10.0


class QueryRefusedError(LookupError):
    """The query service answered with a refusal: ``reason`` says which."""

    def __init__(self, refused: QueryRefused) -> None:
        super().__init__(f"{refused.reason.value}: {refused.detail}")
        self.reason: QueryReason = refused.reason
        self.refused = refused


class QueryClient:
    """One requester's connection to the query service.

    >>> QueryClient(KafkaConnection("127.0.0.1:9092"), requester_id="lobby-1").requester_id
    'lobby-1'
    """

    def __init__(
        self,
        connection: KafkaConnection | None = None,
        topics: Topics | None = None,
        requester_id: str | None = None,
        within_s: float = ANSWER_WITHIN_S,
        *,
        operator_id: str | None = None,
        brand: str | None = None,
    ) -> None:
        self.connection = connection or KafkaConnection.from_env()
        self.topics = topics or topics_from_env()
        # The operator and brand headers of every query (ADR 021), as the Operator's commands.
        self.stamp = Stamp(operator_id or operator_of_prefix(self.topics.prefix), brand)
        self.requester_id = requester_id or f"requester-{new_id()[:12]}"
        self.within_s = within_s  # how long a query waits for its reply
        self._producer: AIOKafkaProducer | None = None
        self._consumer: AIOKafkaConsumer | None = None
        self._waiting: dict[str, asyncio.Future[Reply]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        try:
            self._producer = AIOKafkaProducer(
                **self.connection.kwargs(), acks="all", enable_idempotence=True, linger_ms=0
            )
            self._consumer = AIOKafkaConsumer(
                **self.connection.kwargs(),
                group_id=None,
                enable_auto_commit=False,
                isolation_level="read_committed",
                fetch_max_wait_ms=FETCH_WAIT_MS,
            )
            await self._producer.start()
            await self._consumer.start()
            partitions = len(await self._producer.partitions_for(self.topics.replies))
            tp = TopicPartition(self.topics.replies, partition_for(self.requester_id, partitions))
            self._consumer.assign([tp])
            # Fixed before any query is sent, so no reply can slip past the reader.
            self._consumer.seek(tp, (await self._consumer.end_offsets([tp]))[tp])
            self._reader = asyncio.create_task(self._read(), name="query-replies")
        except BaseException:
            await self.stop()
            raise

    async def stop(self) -> None:
        await stop_all(self._reader, self._consumer, self._producer)

    async def __aenter__(self) -> QueryClient:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    def _envelope(self, player_id: str) -> dict[str, Any]:
        return {
            "event_id": new_id(),
            "player_id": player_id,
            "occurred_at": datetime.now(UTC),
            "correlation_id": new_id(),
            "requester_id": self.requester_id,
        }

    async def ask(self, query: Query, within_s: float | None = None) -> Reply:
        """Send ``query`` and return its reply (a refusal included); StalledError if none comes
        within ``within_s`` seconds (default: the client's)."""
        within_s = self.within_s if within_s is None else within_s
        assert self._producer is not None, "start() the client first"
        if query.requester_id != self.requester_id:
            raise ValueError(f"{query.requester_id!r} is not this client's requester id")
        answer = self._waiting[query.correlation_id] = asyncio.get_running_loop().create_future()
        try:
            await self._producer.send_and_wait(
                self.topics.queries,
                value=dump(query),
                key=query.player_id.encode(),
                headers=self.stamp.headers(),
            )
            async with asyncio.timeout(within_s):
                reply: Reply = await answer
            return reply
        except TimeoutError:
            raise StalledError(f"no reply to {query.type} within {within_s}s") from None  # type: ignore[attr-defined]
        finally:
            self._waiting.pop(query.correlation_id, None)

    async def _expect(self, query: Query, kind: type[R]) -> R:
        reply = await self.ask(query)
        if isinstance(reply, QueryRefused):
            raise QueryRefusedError(reply)
        if not isinstance(reply, kind):
            raise TypeError(f"{type(reply).__name__} in reply to {query.type}")  # type: ignore[attr-defined]
        return reply

    async def open_round(self, player_id: str) -> OpenRoundReply:
        return await self._expect(OpenRoundQuery(**self._envelope(player_id)), OpenRoundReply)

    async def balance(self, player_id: str) -> BalanceReply:
        return await self._expect(BalanceQuery(**self._envelope(player_id)), BalanceReply)

    async def history(
        self,
        player_id: str,
        limit: int | None = None,
        mode: Mode = Mode.REAL,
        table_id: str | None = None,
    ) -> HistoryReply:
        """The player's last N rounds (``table_id``'s only, if named), N the table's history
        length; ``limit`` asks for fewer. The reply's ``limit`` is the one applied."""
        fields = {"limit": limit, "mode": mode, "table_id": table_id}
        query = HistoryQuery(**self._envelope(player_id), **fields)
        return await self._expect(query, HistoryReply)

    async def summary(
        self, player_id: str, round_id: str, lang: Language = "en"
    ) -> RoundSummaryReply:
        query = RoundSummaryQuery(**self._envelope(player_id), round_id=round_id, lang=lang)
        return await self._expect(query, RoundSummaryReply)

    async def promotions(self, player_id: str) -> PromotionsReply:
        """The player's free-hand campaigns (his last 64, oldest first), each with its hands
        played and left and its status (active, cancelled, expired)."""
        query = PromotionsQuery(**self._envelope(player_id))
        return await self._expect(query, PromotionsReply)

    async def protection(self, player_id: str) -> ProtectionReply:
        """The player's limits (one set per currency), whether he is blocked (why, since when)
        and his open sessions (since when, his last reality check acknowledged)."""
        query = ProtectionQuery(**self._envelope(player_id))
        return await self._expect(query, ProtectionReply)

    async def _read(self) -> None:
        assert self._consumer is not None
        while True:
            batches = await self._consumer.getmany(timeout_ms=200)
            for records in batches.values():
                for record in records:
                    try:
                        reply = parse("replies", record.value or b"")
                    except ContractError:
                        continue  # not ours to judge
                    waiting = self._waiting.get(reply.correlation_id)
                    if reply.requester_id == self.requester_id and waiting and not waiting.done():
                        waiting.set_result(reply)
