"""The shared runtime's batch loop on the in-memory transport: decide, publish, reject, poison."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from support.memory import Log, started
from support.messages import command
from support.toy import TOY

from holdem.core.contracts import Call, Malfunction, MessageRejected, Reason, dump, parse
from holdem.runtime.app import build_app
from holdem.runtime.memory import MemoryTransport
from holdem.runtime.settings import RuntimeSettings
from holdem.runtime.transport import GroupSettings

STOP_S = 10.0


class Listening:
    async def on_partitions_revoked(self, revoked: set[Any]) -> None:
        return None

    async def on_partitions_assigned(self, assigned: set[Any]) -> None:
        return None


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


async def cancelled_at_every_turn(start: Callable[[], Awaitable[object]], turns: int = 8) -> None:
    """Cancel what ``start`` starts after 0, 1, ... ``turns`` turns of the event loop."""
    for turn in range(turns):
        await assert_cancelled_after(asyncio.ensure_future(start()), turn)


async def test_a_stop_is_never_lost_while_the_tick_or_the_watch_asks_for_the_log_ends() -> None:
    # The hang of the poison test: the tick's cancel landed in the turn the log's ends came back,
    # and asyncio.wait_for (3.11) returned them instead of raising, so the tick ran for ever.
    async with toy() as log:
        await send(log, dump(command(Call, round_id="r1")))
        await cancelled_at_every_turn(log.service.loop.watches.caught_up)
        await cancelled_at_every_turn(log.service.loop.watches.watch)


async def test_a_stop_is_never_lost_while_a_poll_wakes_for_a_write() -> None:
    for turn in range(8):  # a write wakes the poll, then its cancel comes ``turn`` turns later
        transport = MemoryTransport()
        consumer = transport.consumer(GroupSettings("g", "c", 500, 6_000, 1_000, 300_000))
        consumer.subscribe(["t"], listener=Listening())
        await consumer.start()
        poll = asyncio.ensure_future(consumer.getmany(timeout_ms=60_000, max_records=500))
        await asyncio.sleep(0)  # it found nothing and waits for a write
        await transport.publish("t", b"x", key=b"k")
        await assert_cancelled_after(poll, turn)


async def assert_cancelled_after(task: asyncio.Future[Any], turns: int) -> None:
    """Cancel ``task`` after ``turns`` turns of the event loop: a cancel it accepted (it had not
    ended) must end it cancelled, or a stop that awaits it hangs."""
    for _ in range(turns):
        await asyncio.sleep(0)
    accepted = task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        async with asyncio.timeout(STOP_S):  # a lost cancel may also leave it running
            await task
    assert task.cancelled() or not accepted, f"its cancel lost after {turns} turns"
