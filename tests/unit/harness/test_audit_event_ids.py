"""The audit's event id check: no two records the services wrote share an ``event_id``, on one
topic or across topics (an operator de-duplicating on it would drop one)."""

from __future__ import annotations

from support.messages import command, envelope

from holdem.core.contracts import Call, Malfunction, dump
from holdem.core.contracts.wallet import CallCaptured
from holdem.harness.audit import Record, event_id_violations


def malfunction(event_id: str) -> bytes:
    fields = {**envelope("p1", round_id="r1"), "event_id": event_id}
    return dump(Malfunction(**fields, source="test", reason="x"))


def captured(event_id: str) -> bytes:
    """The wallet's answer to a round.called, as it collided with settlement's round.settled."""
    fields = {**envelope("p1", round_id="r1"), "event_id": event_id}
    movement = {"currency": "EUR", "amount": 20, "available": 0, "held": 0}
    return dump(CallCaptured(**fields, idempotency_key="k1", **movement))


def test_distinct_event_ids_pass() -> None:
    records = [
        Record.of("rounds", 0, 0, malfunction("e1")),
        Record.of("wallet", 0, 0, captured("e2")),
    ]
    assert event_id_violations(records) == []


def test_one_event_id_on_two_topics_is_a_violation() -> None:
    records = [
        Record.of("rounds", 0, 4, malfunction("e1")),
        Record.of("wallet", 1, 9, captured("e1")),
    ]
    assert event_id_violations(records) == ["event_id e1 on rounds[0]@4 and again on wallet[1]@9"]


def test_records_written_from_outside_are_not_the_services_to_answer_for() -> None:
    call = command(Call, round_id="r1")
    records = [
        Record.of("commands", 0, 0, dump(call)),
        Record.of("rounds", 0, 0, malfunction(call.event_id)),
    ]
    assert event_id_violations(records) == []
