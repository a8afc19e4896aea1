"""The live auditor's pieces without a broker: findings written and counted once (also what a
previous run wrote), records released in record time without a partition at its end holding the
others back, and the invariant labels bounded."""

from __future__ import annotations

import doctest
from typing import Any

import pytest
from aiokafka import ConsumerRecord, TopicPartition

from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics
from holdem.harness import auditor_service
from holdem.harness.auditor_service import INVARIANTS, Auditor, Interleave, finding_key

A, B = TopicPartition("t.holdem.rounds", 0), TopicPartition("t.holdem.wallet", 0)


class Producer:
    def __init__(self) -> None:
        self.sent: list[tuple[str, bytes, bytes | None]] = []

    async def send_and_wait(self, topic: str, value: bytes, key: bytes | None, **_: Any) -> None:
        self.sent.append((topic, value, key))


def record(tp: TopicPartition, offset: int, timestamp: int) -> ConsumerRecord[bytes, bytes]:
    return ConsumerRecord(tp.topic, tp.partition, offset, timestamp, 0, None, b"{}", None, 2, 0, [])


def violations(auditor: Auditor) -> float:
    return sum(
        s.value
        for family in auditor.registry.collect()
        for s in family.samples
        if s.name == "holdem_audit_violations_total"
    )


async def test_a_finding_is_written_and_counted_once_and_not_at_all_if_written_before() -> None:
    auditor = Auditor(KafkaConnection("127.0.0.1:1"), Topics().with_prefix("t"))
    auditor.written.add(finding_key("p1/r0: old"))  # what the findings topic held at the start
    producer = Producer()
    auditor.fold.found += ["p1/r1: ended (round.voided) without a BetPlaced", "p1/r0: old"]
    await auditor._report(producer)  # type: ignore[arg-type]
    auditor.fold.found += ["p1/r1: ended (round.voided) without a BetPlaced"]  # found again
    await auditor._report(producer)  # type: ignore[arg-type]
    assert [(t, k) for t, _, k in producer.sent] == [
        ("t.holdem.audit.findings", finding_key("p1/r1: ended (round.voided) without a BetPlaced"))
    ]
    assert violations(auditor) == 1
    assert auditor.fold.found == []  # handed over: the fold keeps no list of findings


def test_records_go_in_record_time_and_a_partition_at_its_end_holds_nothing_back() -> None:
    interleave = Interleave([A, B])
    interleave.add(A, [record(A, 0, 10), record(A, 1, 30)])
    interleave.add(B, [record(B, 0, 20), record(B, 1, 40)])
    first = interleave.release(behind={A, B})
    assert [(r.topic, r.timestamp) for r in first] == [(A.topic, 10), (B.topic, 20), (A.topic, 30)]
    # A is at its end now: B's later record is not held for it.
    assert [r.timestamp for r in interleave.release(behind={B})] == [40]
    assert interleave.buffered() == 0


def test_a_partition_behind_its_end_with_nothing_fetched_holds_the_others_back_for_a_while(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(auditor_service.time, "monotonic", lambda: now[0])
    interleave = Interleave([A, B])
    interleave.add(A, [record(A, 0, 10)])
    assert interleave.release(behind={A, B}) == []  # B's next records may be older
    now[0] += auditor_service.HOLD_S
    assert [r.timestamp for r in interleave.release(behind={A, B})] == [10]


def test_the_invariant_labels_are_a_fixed_set() -> None:
    labels = {auditor_service.invariant_of(f"x/y: {n} something {n}") for n in range(100)}
    assert labels == {"other"}
    names = [name for name, _ in INVARIANTS]
    assert len(names) == len(set(names)) and "other" not in names


def test_the_module_examples_hold() -> None:
    assert doctest.testmod(auditor_service).failed == 0
