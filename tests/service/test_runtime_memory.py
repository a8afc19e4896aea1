"""The shared runtime's batch loop on the in-memory transport: decide, publish, reject, poison."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from support.memory import Log, started
from support.messages import command
from support.toy import TOY

from holdem.core.contracts import Call, Malfunction, MessageRejected, Reason, dump, parse
from holdem.runtime.app import build_app
from holdem.runtime.memory import MemoryTransport
from holdem.runtime.settings import RuntimeSettings


@asynccontextmanager
async def toy() -> AsyncIterator[Log]:
    transport = MemoryTransport()
    async with started(build_app(TOY, RuntimeSettings(), transport=transport), transport) as log:
        yield log


async def send(log: Log, *records: bytes) -> None:
    """Written together: one batch, decided in order, committed in one transaction."""
    for raw in records:
        await log.transport.publish("holdem.commands", raw, key=b"p1")
    await log.transport.settle()


async def test_a_command_is_decided_once_and_its_event_published() -> None:
    async with toy() as log:
        call = command(Call, round_id="r1")
        await send(log, dump(call), dump(call))
        events = [parse("rounds", raw) for raw in log.values("rounds")]
        assert log.service.processor.state_for("p1") == {"r1"}
    assert [type(e) for e in events] == [Malfunction]
    assert events[0].causation_id == call.event_id


async def test_an_unreadable_command_is_rejected_with_its_reason_and_origin() -> None:
    async with toy() as log:
        await send(log, b"{not json", b'{"type": "command.teleport"}')
        rejected = [parse("rejected", raw) for raw in log.values("rejected")]
    assert [r.reason for r in rejected] == [Reason.MALFORMED, Reason.UNKNOWN_TYPE]
    assert all(
        isinstance(r, MessageRejected) and r.source_topic == "holdem.commands" for r in rejected
    )
    assert rejected[0].raw == "{not json"


async def test_a_poison_message_is_rejected_and_its_round_gets_a_malfunction() -> None:
    async with toy() as log:
        await send(log, dump(command(Call, round_id="poison")), dump(command(Call, round_id="r2")))
        rejected = [parse("rejected", raw) for raw in log.values("rejected")]
        rounds = [parse("rounds", raw) for raw in log.values("rounds")]
    assert [r.reason for r in rejected] == [Reason.PROCESSING_FAILED]
    assert [(m.round_id, m.source) for m in rounds] == [("poison", "toy"), ("r2", "toy")]
