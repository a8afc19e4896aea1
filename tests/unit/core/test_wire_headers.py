"""The operator's SDK puts the operator and brand headers on what it sends (ADR 021)."""

from __future__ import annotations

from typing import Any

from support.messages import command

from holdem.client import KafkaConnection, Operator, Topics
from holdem.client.queries import QueryClient
from holdem.core.contracts import Call
from holdem.core.wire.headers import Stamp


class Producer:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send_and_wait(self, topic: str, **record: Any) -> None:
        self.sent.append({"topic": topic, **record})


async def test_every_command_carries_the_operator_and_the_brand_it_is_sent_with() -> None:
    client = Operator(KafkaConnection("h:9092"), Topics().with_prefix("acme"), brand="acme-eu")
    producer = client._producer = Producer()  # type: ignore[assignment]

    await client.send(command(Call, round_id="r1"))
    await client.send(command(Call, round_id="r2"), brand="acme-uk")

    assert [Stamp.of(r["headers"]) for r in producer.sent] == [
        Stamp("acme", "acme-eu"),
        Stamp("acme", "acme-uk"),
    ]
    assert {r["topic"] for r in producer.sent} == {"acme.holdem.commands"}


def test_the_operator_is_the_topics_tenant_unless_named() -> None:
    assert Operator(KafkaConnection("h:9092"), Topics()).stamp() == Stamp("default", None)
    named = Operator(KafkaConnection("h:9092"), Topics(), operator_id="acme")
    assert named.stamp().headers() == [("operator", b"acme")]
    queries = QueryClient(KafkaConnection("h:9092"), Topics().with_prefix("b2"), "lobby")
    assert queries.stamp == Stamp("b2", None)


def test_headers_are_read_in_both_forms_and_the_first_of_a_name_counts() -> None:
    pairs = [("operator", b"a"), ("operator", b"b"), ("brand", b"x"), ("type", b"t")]
    assert Stamp.of(pairs) == Stamp("a", "x")
    assert Stamp.of({"operator": "a", "brand": b"x"}) == Stamp("a", "x")
    assert Stamp.of(None) == Stamp() and Stamp().headers() == []
    assert Stamp.of([("brand", b"\xff")]).problem() == "header 'brand' is not UTF-8"
    assert Stamp.of({"brand": 7}).problem() == "header 'brand' is not text"
    assert Stamp("a", "b" * 65).problem() is not None and Stamp("a", "b" * 64).problem() is None
