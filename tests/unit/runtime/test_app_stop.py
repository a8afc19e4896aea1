"""Issue 26: a graceful stop is seen and bounded.

The last CI lost its run to a wallet that, stopped with SIGTERM, was still running 15 s later
and was SIGKILLed with nothing in its log. Now each phase of ``ServiceApp.stop`` is logged with its
seconds, a phase past its share is cut short with a warning naming where it waits, the whole stop
is bounded below the launcher's grace, and past that bound one critical line names every task
still running (with its stack) and the process exits 70."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import textwrap

from prometheus_client import CollectorRegistry
from structlog.testing import capture_logs

from holdem.ops.launcher import STOP_TIMEOUT_S
from holdem.runtime import app as app_module
from holdem.runtime.app import CLIENT_STOP_S, EXIT_FATAL, PHASE_S, STOP_BOUND_S, ServiceApp
from holdem.runtime.memory import MemoryTransport
from holdem.wallet.app import create_app
from holdem.wallet.settings import WalletSettings

WITHIN_S = 60.0  # generous bounds on what a loaded machine does in well under a second
PHASES = ["tasks", "loop", "consumer", "book", "producer", "twins"]


def wallet(transport: MemoryTransport) -> ServiceApp:
    return create_app(
        WalletSettings(metrics_port=0, instance_id="0"),
        transport=transport,
        registry=CollectorRegistry(),
    )


async def stubborn(released: asyncio.Event) -> None:
    """A task that swallows every cancel until released (what a lost cancel looks like)."""
    while not released.is_set():
        try:
            await released.wait()
        except asyncio.CancelledError:
            continue


def test_the_bound_is_below_the_launchers_grace_and_the_phases_shares_below_the_bound() -> None:
    assert STOP_BOUND_S < STOP_TIMEOUT_S
    assert len(PHASES) == 6 and 4 * PHASE_S + 2 * CLIENT_STOP_S < STOP_BOUND_S


async def test_a_stop_logs_each_phase_with_its_seconds() -> None:
    service = wallet(MemoryTransport())
    async with asyncio.timeout(WITHIN_S):
        await service.start()
        with capture_logs() as lines:
            await service.stop()
    phases = [line for line in lines if line["event"] == "stop phase"]
    assert [line["phase"] for line in phases] == PHASES
    assert all(isinstance(line["seconds"], float) for line in phases)
    assert [line["event"] for line in lines if line["log_level"] != "info"] == []
    assert lines[-1]["event"] == "stopped"


async def test_a_phase_that_does_not_end_is_cut_short_and_named() -> None:
    hung: list[bool] = []
    service = wallet(MemoryTransport())
    service.hung = lambda: hung.append(True)
    released = asyncio.Event()
    async with asyncio.timeout(WITHIN_S):
        await service.start()
        service.tasks.append(asyncio.create_task(stubborn(released), name="stubborn"))
        await asyncio.sleep(0)
        try:
            with capture_logs() as lines:
                await service.stop()
        finally:
            released.set()
    cut = [line for line in lines if line["event"] == "stop phase cut short"]
    assert [line["phase"] for line in cut] == ["tasks"]
    assert any("in stubborn" in where for where in cut[0]["running"]["stubborn"])
    # The phases after it still ran: the consumer left, the producer closed.
    assert [line["phase"] for line in lines if line["event"] == "stop phase"] == PHASES[1:]
    assert hung == []


async def test_a_periodic_task_whose_action_loses_the_cancel_still_ends() -> None:
    started = asyncio.Event()

    async def loses_the_cancel() -> None:
        started.set()
        try:
            await asyncio.sleep(WITHIN_S)
        except asyncio.CancelledError:
            raise RuntimeError("a library turned the cancel into its own error") from None

    task = asyncio.create_task(app_module._every(0, loses_the_cancel))
    async with asyncio.timeout(WITHIN_S):
        await started.wait()
        task.cancel()
        await asyncio.wait({task})
    assert task.cancelled()


# A wallet on the in-memory log, in a process of its own, and a task that swallows every cancel.
PRELUDE = """
import asyncio
from prometheus_client import CollectorRegistry
from holdem.runtime import app
from holdem.runtime.memory import MemoryTransport
from holdem.wallet.app import create_app
from holdem.wallet.settings import WalletSettings

async def stubborn():
    while True:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            continue

service = create_app(
    WalletSettings(metrics_port=0, instance_id="0"),
    transport=MemoryTransport(),
    registry=CollectorRegistry(),
)
"""

SCRIPT = """
service.stop_bound_s = 0.5  # below the first phase's share: the bound, not a cut, ends it

async def main():
    await service.start()
    service.tasks.append(asyncio.create_task(stubborn(), name="stubborn"))
    await asyncio.sleep(0)
    await service.stop()
    print("stop returned", flush=True)

asyncio.run(main())
"""


def run_script(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PRELUDE) + textwrap.dedent(script)],
        capture_output=True,
        text=True,
        timeout=WITHIN_S,  # without the bound the process waits for ever: this fails the test
    )


def test_a_stop_past_its_bound_names_what_runs_and_exits_70() -> None:
    done = run_script(SCRIPT)
    out = done.stdout + done.stderr
    assert done.returncode == EXIT_FATAL, out[-3000:]
    assert "stop returned" not in out
    hung = [line for line in out.splitlines() if "stop hung: exiting" in line]
    assert len(hung) == 1, out[-3000:]
    assert re.search(r"phase\W{1,4}tasks", hung[0]), hung[0]
    assert "stubborn" in hung[0] and "in stubborn" in hung[0], hung[0]


AFTER_THE_STOP = """
service.stop_bound_s = 1.0
started = service.start

async def start():
    await started()
    asyncio.create_task(stubborn(), name="left-over")  # none of the app's: the stop ends
    asyncio.get_running_loop().call_later(0.1, service.exit)

service.start = start
app.run(service)
print("run returned", flush=True)
"""


def test_what_asyncio_run_awaits_after_the_stop_is_bounded_too() -> None:
    done = run_script(AFTER_THE_STOP)  # asyncio.run would await the left-over task for ever
    out = done.stdout + done.stderr
    assert done.returncode == EXIT_FATAL, out[-3000:]
    assert "run returned" not in out
    assert [line for line in out.splitlines() if '"stopped"' in line or "] stopped" in line]
    hung = [line for line in out.splitlines() if "stop hung: exiting" in line]
    assert len(hung) == 1 and "after the stop" in hung[0], out[-3000:]
