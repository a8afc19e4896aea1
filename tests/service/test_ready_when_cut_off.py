"""Issue 26: an instance cut off from the broker while a commit hangs says it is not ready.

A compose test cut the wallet off the network for 30 s and it stayed ready: aiokafka's
``commit_transaction`` waited with no timeout and held the processor's lock for the whole cut,
and the tick, the only caller of ``caught_up`` (which marks the broker unreachable), waited on
that lock in ``run_tick``. The stall watch takes no lock: its failed ask for the log's ends now
marks the member unready too, and only a tick's answered ask clears it."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from support.toy import TOY

from holdem.runtime import app as app_module
from holdem.runtime import watches as watches_module
from holdem.runtime.app import build_app, running
from holdem.runtime.memory import MemoryTransport
from holdem.runtime.settings import RuntimeSettings

WITHIN_S = 30.0  # generous bound for a condition polled for


async def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WITHIN_S
    while not condition():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.02)


async def test_a_member_whose_commit_hangs_goes_unready_when_the_broker_stops_answering(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exits: list[BaseException] = []
    monkeypatch.setattr(app_module, "exit_fatally", lambda _service, error: exits.append(error))
    monkeypatch.setattr(watches_module, "CAUGHT_UP_TIMEOUT_S", 0.2)  # an ask that hangs ends soon
    spec = dataclasses.replace(TOY, tick=lambda _state, _ctx: [], tick_interval_s=0.05)
    registry = CollectorRegistry()
    transport = MemoryTransport()
    service = build_app(spec, RuntimeSettings(), transport=transport, registry=registry)
    service.loop.watches.stall_s = 0.8  # the watch asks every 0.2 s (every 5 s in a service)

    def ready() -> float | None:
        return registry.get_sample_value("holdem_ready", {"service": spec.name})

    ticking = asyncio.Event()
    run_tick = service.processor.run_tick

    async def tick(*args: Any) -> None:
        ticking.set()
        await run_tick(*args)

    monkeypatch.setattr(service.processor, "run_tick", tick)
    async with running(service):
        await transport.settle()
        await until(lambda: ready() == 1.0, "the toy never became ready")
        consumer = service.loop.group.consumer
        assert consumer is not None
        answered = consumer.end_offsets
        async with service.processor.lock:  # what a commit_transaction hung on the cut holds
            ticking.clear()
            await asyncio.wait_for(ticking.wait(), WITHIN_S)  # a tick now waits on the lock

            async def unanswered(_tps: object) -> dict[object, int]:
                await asyncio.Event().wait()  # the broker is gone: no answer, ever
                raise AssertionError("unreachable")

            monkeypatch.setattr(consumer, "end_offsets", unanswered)
            await until(lambda: ready() == 0.0, "cut off with a hung commit, still ready")
            monkeypatch.setattr(consumer, "end_offsets", answered)
            await asyncio.sleep(0.5)  # the watch's answers alone do not clear it
            assert ready() == 0.0
        # The commit ends; the tick asks, the broker answers: ready again.
        await until(lambda: ready() == 1.0, "the broker answered the tick, still unready")
    assert exits == []  # an outage is not this member's stall
