"""Issue 26: a service up but deciding nothing exits for its supervisor (the stall watch).

The long-outage Kafka test stalled twice after every service was ready again: a restarted
wallet (once settlement) rebuilt its partitions, then decided nothing, with no error line and no
exit. One way aiokafka gets there: the member's stable fetch of its committed offsets answered
UNSTABLE_OFFSET_COMMIT for as long as a transaction that committed offsets for its group stays
open, retried for ever at debug level; with no position it fetches nothing, and ``position()``
waits with it. The in-memory transport's ``hold_committed`` stands for that coordinator."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from support.messages import command
from support.toy import TOY

from holdem.core.contracts import Call, dump
from holdem.runtime import app as app_module
from holdem.runtime.app import ServiceApp, build_app, running
from holdem.runtime.memory import MemoryTransport
from holdem.runtime.settings import RuntimeSettings
from holdem.runtime.watches import CAUGHT_UP_TIMEOUT_S, LATE_S, StalledError

STALL_S = 0.5  # the watch's bound in these tests (45 s in a service)
WITHIN_S = 30.0  # generous bound for a condition polled for


@asynccontextmanager
async def toy(
    monkeypatch: pytest.MonkeyPatch, *, held: bool
) -> AsyncIterator[tuple[ServiceApp, MemoryTransport, list[BaseException]]]:
    """The toy service on the in-memory log, its fatal exits recorded instead of taken."""
    exits: list[BaseException] = []
    monkeypatch.setattr(app_module, "exit_fatally", lambda _service, error: exits.append(error))
    transport = MemoryTransport()
    service = build_app(TOY, RuntimeSettings(), transport=transport)
    service.loop.watches.stall_s = STALL_S
    if held:
        transport.hold_committed(service.loop.group_id)
    async with running(service):
        await transport.settle()
        yield service, transport, exits


async def call(transport: MemoryTransport, round_id: str) -> None:
    await transport.publish("holdem.commands", dump(command(Call, round_id=round_id)), key=b"p1")


async def test_a_member_that_never_gets_its_committed_offsets_exits_for_its_supervisor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with toy(monkeypatch, held=True) as (service, transport, exits):
        assert service.loop.healthy()  # rebuilt and the member: it looks ready
        await call(transport, "r1")
        deadline = time.monotonic() + WITHIN_S
        while not exits:  # the app's periodic watch, not a call of the test
            assert time.monotonic() < deadline, "a stalled member stayed up deciding nothing"
            await asyncio.sleep(0.05)
        decided = transport.values("holdem.rounds")
    assert decided == []  # it had indeed decided nothing
    assert isinstance(exits[0], StalledError)
    assert "holdem.commands" in str(exits[0])  # the line says which partition waits


async def test_an_idle_or_a_deciding_member_is_not_stalled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with toy(monkeypatch, held=False) as (service, transport, exits):
        loop = service.loop
        loop.group.progress_at -= 3600  # an hour without a batch: idle, nothing waiting
        await loop.watches.watch()
        assert exits == []

        await call(transport, "r2")
        await transport.settle()  # decided and committed
        assert len(transport.values("holdem.rounds")) == 1
        await loop.watches.watch()
        assert exits == []


async def test_a_broker_that_does_not_answer_is_not_the_members_stall(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with toy(monkeypatch, held=True) as (service, transport, exits):
        loop = service.loop
        assert loop.group.consumer is not None
        for task in service.tasks:  # the test drives the watch itself
            task.cancel()
        await call(transport, "r3")

        async def unanswered(_tps: object) -> dict[object, int]:
            raise ConnectionError("broker away")

        answered = loop.group.consumer.end_offsets
        monkeypatch.setattr(loop.group.consumer, "end_offsets", unanswered)
        loop.group.progress_at -= 3600
        await loop.watches.watch()
        assert exits == []  # an outage: the clock starts again when the broker answers

        monkeypatch.setattr(loop.group.consumer, "end_offsets", answered)
        await loop.watches.watch()
        assert exits == []  # waiting since the broker answered, not yet for stall_s
        loop.group.progress_at -= 3600
        await loop.watches.watch()
        assert [type(e) for e in exits] == [StalledError]


async def test_a_watch_that_runs_late_restarts_its_clock_instead_of_judging_a_stall(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A blocked event loop (Hypothesis generating records in an in-process dealer's loop, say)
    runs the watch late: the time it did not watch is no stall of the member (LATE_S)."""
    async with toy(monkeypatch, held=True) as (service, transport, exits):
        watches = service.loop.watches
        for task in service.tasks:  # the test drives the watch itself
            task.cancel()
        await call(transport, "r4")
        await watches.watch()  # on time: its clock starts
        assert exits == []

        watches._ran_at = time.monotonic() - (watches.period_s + CAUGHT_UP_TIMEOUT_S + LATE_S + 1)
        service.loop.group.progress_at -= 3600  # nothing decided, as far as its clock knows
        await watches.watch()
        assert exits == []  # late: the clock restarted, no stall judged

        service.loop.group.progress_at -= 3600
        await watches.watch()  # on time again, and records still wait: a stall
        assert [type(e) for e in exits] == [StalledError]
