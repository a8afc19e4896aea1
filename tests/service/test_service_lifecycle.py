"""A service process is a plain asyncio main (ADR 023): ``serve`` starts the service, runs
until SIGTERM/SIGINT (or ``exit``), then stops it; no faststream app around it."""

from __future__ import annotations

import asyncio
import os
import signal

from support.toy import TOY

from holdem.runtime.app import ServiceApp, build_app
from holdem.runtime.memory import MemoryTransport
from holdem.runtime.settings import RuntimeSettings

WAIT_S = 60.0


async def served_until(stop: object) -> ServiceApp:
    service = build_app(TOY, RuntimeSettings(), transport=MemoryTransport())
    task = asyncio.create_task(service.serve())
    async with asyncio.timeout(WAIT_S):
        while not service.loop.healthy():
            assert not task.done(), task
            await asyncio.sleep(0.02)
    assert len(service.tasks) == 4  # the ticks, the lag, the twin watch and the stall watch
    if stop == "exit":
        service.exit()
    else:
        os.kill(os.getpid(), signal.SIGTERM)  # its handler is the service's, while it serves
    await asyncio.wait_for(task, WAIT_S)
    return service


async def test_serve_runs_the_service_until_asked_to_exit_then_stops_it() -> None:
    service = await served_until("exit")
    assert not service.tasks  # stopped: the periodic tasks cancelled and awaited


async def test_sigterm_stops_a_serving_service_and_its_handler_goes_with_it() -> None:
    service = await served_until("sigterm")
    assert not service.tasks  # stopped: the periodic tasks cancelled and awaited
    loop = asyncio.get_running_loop()
    assert not loop.remove_signal_handler(signal.SIGTERM)  # serve removed it
