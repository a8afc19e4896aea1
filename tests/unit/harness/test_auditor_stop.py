"""The live auditor's stop is bounded like a service's: SIGTERM, then the last findings, the
checkpoint and the offsets; a stop that cannot end (its broker gone: a soak killed with SIGTERM
left its auditor running for good) is logged and ends the process with status 70."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

from holdem.harness.auditor_service import EXIT_KAFKA

WITHIN_S = 30.0  # the bound below is 1 s: without it the process would wait for ever

SCRIPT = """
import asyncio, os, signal, sys
from holdem.harness import auditor_service
from holdem.runtime.logging import configure_logging

configure_logging("auditor")

class Auditor:
    def __init__(self, stubborn):
        self.stop = asyncio.Event()
        self.stubborn = stubborn
        self.fold = type("Fold", (), {"records": 0})()
        self.reported = self.known = 0

    async def run(self):
        print("running", flush=True)
        await self.stop.wait()
        if self.stubborn:  # the last findings sent to a broker that is gone
            await asyncio.Event().wait()

code = asyncio.run(auditor_service._serve(Auditor(sys.argv[1] == "stubborn"), stop_bound_s=1.0))
print("returned", code, flush=True)
sys.exit(code)
"""


def stopped(kind: str) -> tuple[int, str, float]:
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), kind],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "running"
    began = time.monotonic()
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=WITHIN_S)
    return process.returncode, out, time.monotonic() - began


def test_a_stop_that_cannot_end_is_logged_and_exits_70_within_its_bound() -> None:
    code, out, seconds = stopped("stubborn")

    assert code == EXIT_KAFKA, out[-3000:]
    assert "returned" not in out
    hung = [line for line in out.splitlines() if "stop hung: exiting" in line]
    assert len(hung) == 1 and "auditor" in hung[0], out[-3000:]
    assert seconds < WITHIN_S


def test_a_stop_that_ends_exits_0() -> None:
    code, out, _ = stopped("willing")

    assert code == 0, out[-3000:]
    assert "returned 0" in out and "stop hung" not in out
