"""The rebuild's view of a transaction held open past its timeout (ADR 039), without a broker:
DescribeProducers and ListTransactions as sent and decoded, which holders are fenced."""

from __future__ import annotations

import io
from typing import Any

import pytest
from aiokafka import TopicPartition
from aiokafka.protocol.types import (
    CompactArray,
    CompactString,
    Int16,
    Int32,
    Int64,
    TaggedFields,
)

from holdem.runtime import open_transactions
from holdem.runtime.open_transactions import (
    DescribeProducers,
    DescribeProducersRequest_v0,
    DescribeProducersResponse_v0,
    ListTransactions,
    ListTransactionsRequest_v0,
    ListTransactionsResponse_v0,
)

TP = TopicPartition("rounds", 2)
VAULT = TopicPartition("dealer.vault", 2)


def producers_response(rows: list[tuple[TopicPartition, int, int]]) -> Any:
    """A DescribeProducers v0 response on the wire: (partition, producer id, txn start)."""
    partitions: list[Any] = [
        (tp.partition, 0, None, [(pid, 3, 7, 0, 1, start, {})], {}) for tp, pid, start in rows
    ]
    raw = (
        Int32.encode(0)
        + CompactArray(
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
        ).encode([("rounds", partitions, {})])
        + TaggedFields.encode({})
    )
    return DescribeProducersResponse_v0.decode(io.BytesIO(raw))


def transactions_response(rows: list[tuple[str, int, str]]) -> Any:
    raw = (
        Int32.encode(0)
        + Int16.encode(0)
        + CompactArray(CompactString("utf-8")).encode([])
        + CompactArray(
            ("transactional_id", CompactString("utf-8")),
            ("producer_id", Int64),
            ("transaction_state", CompactString("utf-8")),
            ("tags", TaggedFields),
        ).encode([(*row, {}) for row in rows])
        + TaggedFields.encode({})
    )
    return ListTransactionsResponse_v0.decode(io.BytesIO(raw))


def test_the_requests_name_the_partitions_and_producer_ids_asked() -> None:
    asked = DescribeProducers([TP, VAULT, TopicPartition("rounds", 0)]).build(
        DescribeProducersRequest_v0
    )
    assert asked.topics == [("dealer.vault", [2], {}), ("rounds", [0, 2], {})]
    assert asked.encode()  # a flexible v0 struct encodes
    listed = ListTransactions({9, 4}).build(ListTransactionsRequest_v0)
    assert listed.producer_id_filters == [4, 9] and listed.state_filters == []


async def test_only_a_transaction_open_before_the_rebuild_began_is_fenced(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Producer 11 opened its transaction at offset 30, before the rebuild's high watermark
    (35): the holder, fenced by its id. Producer 12's began at 35, after (the rebuild's own
    service committing on, say): not the rebuild's to end. Producer 13 holds one the coordinator
    does not list to us (another service's, or one it does not know): logged, not fenced."""
    answers = {
        "describe": producers_response([(TP, 11, 30), (TP, 12, 35), (TP, 13, 31)]),
        "list": transactions_response([("holdem-dealer-1", 11, "Ongoing")]),
    }
    sent: list[Any] = []

    async def send_to(consumer: Any, node: int, request: Any) -> Any:
        sent.append(request)
        return answers["describe" if isinstance(request, DescribeProducers) else "list"]

    fenced: list[str] = []

    async def fence(connection: Any, transactional_id: str) -> None:
        fenced.append(transactional_id)

    monkeypatch.setattr(open_transactions, "send_to", send_to)
    monkeypatch.setattr(open_transactions, "leader_of", lambda consumer, tp: 1)
    monkeypatch.setattr(open_transactions, "brokers", lambda consumer: [1])
    monkeypatch.setattr(open_transactions, "fence", fence)

    found = await open_transactions.release("bootstrap:9092", object(), {TP: 35})

    assert [(h.producer_id, h.transactional_id, h.state) for h in found] == [
        (11, "holdem-dealer-1", "Ongoing"),
        (13, None, None),
    ]
    assert fenced == ["holdem-dealer-1"]
    assert isinstance(sent[1], ListTransactions) and sorted(sent[1]._ids) == [11, 13]
