"""The shared runtime with faststream's in-memory broker: decide, publish, reject, poison."""

from __future__ import annotations

from faststream.kafka import TestKafkaBroker
from faststream.kafka.annotations import KafkaMessage
from support.messages import command
from support.toy import TOY

from holdem.core.contracts import Call, Malfunction, MessageRejected, Reason, dump, parse
from holdem.runtime.app import build_app
from holdem.runtime.settings import RuntimeSettings


def toy():
    service = build_app(TOY, RuntimeSettings(), in_memory=True)
    seen: dict[str, list[bytes]] = {"rounds": [], "rejected": []}
    for role, sink in seen.items():
        topic = getattr(service.processor.topics, role)
        service.broker.subscriber(topic, group_id=f"observer-{role}")(_recorder(sink))

    return service, seen


def _recorder(sink: list[bytes]):
    async def record(message: KafkaMessage) -> None:
        sink.append(message.body)

    return record


async def test_a_command_is_decided_once_and_its_event_published() -> None:
    service, seen = toy()
    async with TestKafkaBroker(service.broker) as broker:
        call = command(Call, round_id="r1")
        await broker.publish(dump(call), "holdem.commands", key=b"p1")
        await broker.publish(dump(call), "holdem.commands", key=b"p1")
        events = [parse("rounds", raw) for raw in seen["rounds"]]
    assert [type(e) for e in events] == [Malfunction]
    assert events[0].causation_id == call.event_id
    assert service.processor.partition(0).state == {"r1"}


async def test_an_unreadable_command_is_rejected_with_its_reason_and_origin() -> None:
    service, seen = toy()
    async with TestKafkaBroker(service.broker) as broker:
        await broker.publish(b"{not json", "holdem.commands", key=b"p1")
        await broker.publish(b'{"type": "command.teleport"}', "holdem.commands", key=b"p1")
        rejected = [parse("rejected", raw) for raw in seen["rejected"]]
    assert [r.reason for r in rejected] == [Reason.MALFORMED, Reason.UNKNOWN_TYPE]
    assert all(
        isinstance(r, MessageRejected) and r.source_topic == "holdem.commands" for r in rejected
    )
    assert rejected[0].raw == "{not json"


async def test_a_poison_message_is_rejected_and_its_round_gets_a_malfunction() -> None:
    service, seen = toy()
    async with TestKafkaBroker(service.broker) as broker:
        await broker.publish(dump(command(Call, round_id="poison")), "holdem.commands", key=b"p1")
        await broker.publish(dump(command(Call, round_id="r2")), "holdem.commands", key=b"p1")
        rejected = [parse("rejected", raw) for raw in seen["rejected"]]
        rounds = [parse("rounds", raw) for raw in seen["rounds"]]
    assert [r.reason for r in rejected] == [Reason.PROCESSING_FAILED]
    assert [(m.round_id, m.source) for m in rounds] == [("poison", "toy"), ("r2", "toy")]
