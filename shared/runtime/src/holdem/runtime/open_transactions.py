"""Which producer holds a partition's last stable offset back, and ending its transaction (ADR 039).

A rebuild waits for every transaction open when it began (ADR 031); the broker aborts one at its
timeout (15 s). When one is still open well past that, the rebuild asks the partition's leader
which producers have a transaction open on it (DescribeProducers), asks the coordinators which
transactional id each producer id is (ListTransactions), and starts a producer with that id: its
InitProducerId bumps the id's epoch, which aborts the transaction and fences the instance that
held it, exactly as that instance's own restart would. The broker answers ListTransactions only
with the ids the principal may describe, so a service ends only its own service's transactions
(its instances are the partitions' previous owners); another producer is logged, not touched.
aiokafka has neither request: both are defined here (flexible versions 0, Kafka 3.0+)."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import structlog
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import (
    CompactArray,
    CompactString,
    Int16,
    Int32,
    Int64,
    Schema,
    TaggedFields,
)

from holdem.core.wire.connection import KafkaConnection, as_connection
from holdem.runtime.kafka_internals import brokers, leader_of, send_to

log = structlog.get_logger(__name__)
FENCE_WITHIN_S = 30.0  # an InitProducerId answered "concurrent transactions" is asked again


@dataclass(frozen=True)
class Holder:
    """A producer with a transaction open on a partition, and what its coordinator says of it."""

    tp: TopicPartition
    producer_id: int
    epoch: int
    txn_start_offset: int
    transactional_id: str | None = None  # None: no coordinator lists it (to us)
    state: str | None = None


class DescribeProducersResponse_v0(Response):  # type: ignore[misc]
    API_KEY = 61
    API_VERSION = 0
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        (
            "topics",
            CompactArray(
                ("name", CompactString("utf-8")),
                (
                    "partitions",
                    CompactArray(
                        ("partition_index", Int32),
                        ("error_code", Int16),
                        ("error_message", CompactString("utf-8")),
                        (
                            "active_producers",
                            CompactArray(
                                ("producer_id", Int64),
                                ("producer_epoch", Int32),
                                ("last_sequence", Int32),
                                ("last_timestamp", Int64),
                                ("coordinator_epoch", Int32),
                                ("current_txn_start_offset", Int64),
                                ("tags", TaggedFields),
                            ),
                        ),
                        ("tags", TaggedFields),
                    ),
                ),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class DescribeProducersRequest_v0(RequestStruct):  # type: ignore[misc]
    FLEXIBLE_VERSION = True
    API_KEY = 61
    API_VERSION = 0
    RESPONSE_TYPE = DescribeProducersResponse_v0
    SCHEMA = Schema(
        (
            "topics",
            CompactArray(
                ("name", CompactString("utf-8")),
                ("partition_indexes", CompactArray(Int32)),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class DescribeProducers(Request[DescribeProducersRequest_v0]):  # type: ignore[misc]
    API_KEY = 61

    def __init__(self, tps: Collection[TopicPartition]) -> None:
        self._tps = tps

    def build(self, cls: type[DescribeProducersRequest_v0]) -> DescribeProducersRequest_v0:
        topics = sorted({tp.topic for tp in self._tps})
        return cls(
            [(t, sorted(tp.partition for tp in self._tps if tp.topic == t), {}) for t in topics],
            {},
        )


class ListTransactionsResponse_v0(Response):  # type: ignore[misc]
    API_KEY = 66
    API_VERSION = 0
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        ("error_code", Int16),
        ("unknown_state_filters", CompactArray(CompactString("utf-8"))),
        (
            "transaction_states",
            CompactArray(
                ("transactional_id", CompactString("utf-8")),
                ("producer_id", Int64),
                ("transaction_state", CompactString("utf-8")),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class ListTransactionsRequest_v0(RequestStruct):  # type: ignore[misc]
    FLEXIBLE_VERSION = True
    API_KEY = 66
    API_VERSION = 0
    RESPONSE_TYPE = ListTransactionsResponse_v0
    SCHEMA = Schema(
        ("state_filters", CompactArray(CompactString("utf-8"))),
        ("producer_id_filters", CompactArray(Int64)),
        ("tags", TaggedFields),
    )


class ListTransactions(Request[ListTransactionsRequest_v0]):  # type: ignore[misc]
    API_KEY = 66

    def __init__(self, producer_ids: Collection[int]) -> None:
        self._ids = sorted(producer_ids)

    def build(self, cls: type[ListTransactionsRequest_v0]) -> ListTransactionsRequest_v0:
        return cls([], self._ids, {})


async def holders(
    consumer: AIOKafkaConsumer, written: Mapping[TopicPartition, int]
) -> list[Holder]:
    """The producers with a transaction open on the partitions of ``written`` since before its
    offset there (``consumer`` knows their leaders), each with its transactional id and state
    where a coordinator lists it to us."""
    by_leader: dict[int, list[TopicPartition]] = {}
    for tp in written:
        by_leader.setdefault(leader_of(consumer, tp), []).append(tp)
    found: list[Holder] = []
    for leader, led in by_leader.items():
        answer: Any = await send_to(consumer, leader, DescribeProducers(led))
        for name, partitions, _ in answer.topics:
            for index, code, message, producers, _ in partitions:
                if code:
                    log.warning(
                        "describe producers refused",
                        tp=f"{name}-{index}",
                        code=code,
                        message=message,
                    )
                for pid, epoch, _seq, _ts, _coord, start, _ in producers:
                    tp = TopicPartition(name, index)
                    if 0 <= start < written[tp]:  # -1: none open; later: not one we wait for
                        found.append(Holder(tp, pid, epoch, start))
    if not found:
        return found
    ids: dict[int, tuple[str, str]] = {}
    for node in brokers(consumer):
        answer = await send_to(consumer, node, ListTransactions({h.producer_id for h in found}))
        for tid, pid, state, _ in answer.transaction_states:
            ids[pid] = (tid, state)
    unknown = (None, None)
    return [
        Holder(h.tp, h.producer_id, h.epoch, h.txn_start_offset, *ids.get(h.producer_id, unknown))
        for h in found
    ]


async def fence(connection: KafkaConnection | str, transactional_id: str) -> None:
    """A new epoch of ``transactional_id``: the coordinator aborts what it left open and fences
    the producer that used it (TimeoutError past FENCE_WITHIN_S)."""
    producer = AIOKafkaProducer(
        **as_connection(connection).kwargs(), transactional_id=transactional_id
    )
    try:
        async with asyncio.timeout(FENCE_WITHIN_S):
            await producer.start()
    finally:
        await producer.stop()


async def release(
    connection: KafkaConnection | str,
    consumer: AIOKafkaConsumer,
    written: Mapping[TopicPartition, int],
) -> list[Holder]:
    """End the transactions open on the partitions of ``written`` since before its offsets, those
    we may end (module docstring); log each holder with what its coordinator says, the evidence
    of why it is still open. Returns the holders."""
    found = await holders(consumer, written)
    fenced: set[str] = set()
    for holder in found:
        log.warning(
            "a transaction holds the partition past its timeout",
            tp=f"{holder.tp.topic}-{holder.tp.partition}",
            producer_id=holder.producer_id,
            epoch=holder.epoch,
            since_offset=holder.txn_start_offset,
            transactional_id=holder.transactional_id,
            coordinator_state=holder.state,
        )
        tid = holder.transactional_id
        if tid is None or tid in fenced:
            continue
        fenced.add(tid)
        try:
            await fence(connection, tid)
            log.warning("fenced the transactional id holding the partition", transactional_id=tid)
        except (KafkaError, TimeoutError, OSError) as error:  # the rebuild's bound still holds
            log.error(
                "could not fence the transactional id", transactional_id=tid, error=repr(error)
            )
    return found
