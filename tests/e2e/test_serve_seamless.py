"""`make serve SEAMLESS=1` (issue 18 item 4): the wallet in seamless mode, answered by the
reference operator wallet, so a player with no deposit plays a round to its settlement."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from holdem.client import Operator, Player
from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(420)]

READY_LINE = "Ctrl-C stops"
KAFKA_SH = Path(__file__).resolve().parents[2] / "deploy" / "kafka" / "kafka.sh"
OPENING = 50_000


async def test_serve_seamless_plays_a_round_against_the_reference_operator_wallet(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "serve"
    command = [sys.executable, "-m", "holdem.ops.serve", "--dir", str(run_dir), "--no-metrics"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_")}
    serve = await asyncio.create_subprocess_exec(
        *command, "--seamless", "--opening", str(OPENING),
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    printed = ""
    try:
        assert serve.stdout is not None
        while READY_LINE not in printed:
            line = await asyncio.wait_for(serve.stdout.readline(), 300)
            assert line, printed  # ended before it was up
            printed += line.decode()
        assert "wallet: seamless" in printed, printed
        assert "operator-wallet.log" in printed, printed
        operator = KafkaConnection.from_file(run_dir / "clients" / "operator.env")
        async with Operator(operator, Topics()) as client:
            player = Player(client, f"seamless-{uuid.uuid4().hex[:8]}", step_s=120.0)
            played = await player.bet(100)  # no deposit: the operator's wallet holds the money
            await played.dealt()
            await played.call()
            outcome = await played.outcome()
        assert outcome.settled is not None, outcome
        serve.send_signal(signal.SIGINT)
        rest, _ = await asyncio.wait_for(serve.communicate(), 240)
        printed += rest.decode()
    finally:
        if serve.returncode is None:
            serve.kill()
            await serve.wait()
        down = [str(KAFKA_SH), "down", "--dir", str(run_dir), "--wipe"]
        await asyncio.to_thread(subprocess.run, down, capture_output=True, timeout=120)
    assert serve.returncode == 0, printed
