"""Issue 31 item 3 (ADR 041) through the command line, on a broker: ``holdem audit --checkpoint
DIR --until T`` then ``--final`` read each record once, the second period starting exactly at
the first's cut, and give the whole audit's findings (a forged payout after the cut, found by
the second period); a closed chain and a corrupt checkpoint are refused with exit 2."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from support.kafka import Cluster
from test_audit_stream_kafka import game_topics  # the game's topics, fresh

from holdem.core.contracts import dump
from holdem.core.wire.headers import TYPE_HEADER, Stamp, operator_of_prefix
from holdem.core.wire.topics import Topics
from holdem.harness.audit import audit_run

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench_replay import generate

__all__ = ["game_topics"]  # a fixture, used by name
pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]
ROUNDS = 200  # 12 players: about 2,200 records over three partitions
STEP_MS = 3


async def audit(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "holdem.harness.audit_cli", *args, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()


async def write_history(cluster: Cluster, topics: Topics, start: int) -> tuple[int, str]:
    """The rounds as the services would have written them, ``STEP_MS`` apart from ``start``;
    the first payout of the second half credits one chip more than its round paid. The count
    written and the forged payout's player."""
    events = list(generate(ROUNDS, 12))
    at = next(
        n
        for n, (_, e) in enumerate(events)
        if n > len(events) * 3 // 4 and e.type == "wallet.payout_credited"
    )
    role, payout = events[at]
    events[at] = (role, payout.model_copy(update={"amount": payout.amount + 1}))  # type: ignore[attr-defined]
    producer = AIOKafkaProducer(**cluster.admin.kwargs(), acks="all", linger_ms=20)
    await producer.start()
    operator = Stamp(operator_of_prefix(topics.prefix)).headers()
    try:
        sent = []
        for n, (role, event) in enumerate(events):
            headers = [(TYPE_HEADER, event.type.encode()), *operator]
            sent.append(
                await producer.send(
                    getattr(topics, role), dump(event), key=event.player_id.encode(),
                    headers=headers, timestamp_ms=start + STEP_MS * n,
                )
            )  # fmt: skip
        await asyncio.gather(*sent)
        return len(sent), payout.player_id
    finally:
        await producer.stop()


def read_of(out: str) -> int:
    found = re.match(r"(\d+) records read", out)
    assert found, out
    return int(found.group(1))


def findings(out: str) -> list[str]:
    return [line[2:] for line in out.splitlines() if line.startswith("  ")]


async def test_two_periods_through_the_command_line_give_the_whole_audits_findings(
    kafka: Cluster, game_topics: Topics, tmp_path: Path
) -> None:
    topics = game_topics
    admin_file = tmp_path / "admin.env"
    admin_file.write_text("".join(f"{k}={v}\n" for k, v in kafka.admin.env().items()))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_")}
    start = int(time.time() * 1000) - 3_600_000
    written, forger = await write_history(kafka, topics, start)
    where = ("--env-file", str(admin_file), "--prefix", topics.prefix, "--require-ended", "--all")
    chain = ("--checkpoint", str(tmp_path / "ckpt"))
    cut = start + STEP_MS * (written // 2)

    code, first, err = await audit(*where, *chain, "--until", str(cut), env=env)
    assert code == 0 and not err, (first, err)
    code, second, err = await audit(*where, *chain, "--final", env=env)
    assert code == 1 and not err, (second, err)

    # Each record read once: the second period started exactly at the first's cut.
    assert 0 < read_of(first) < written and read_of(first) + read_of(second) == written
    assert findings(first) == []
    assert any(forger in v for v in findings(second)), second
    whole = await audit_run(kafka.admin, topics)
    assert Counter(findings(second)) == Counter(whole.violations)
    assert f"so far {written} records, {ROUNDS} rounds judged, {ROUNDS} ended" in second

    # The chain is closed; a corrupt checkpoint is refused on one line, exit 2.
    code, out, err = await audit(*where, *chain, env=env)
    assert code == 2 and out == "" and "closed by --final" in err and err.count("\n") == 1
    checkpoint = tmp_path / "ckpt" / "audit.ckpt"
    checkpoint.write_bytes(checkpoint.read_bytes() + b"x")
    code, out, err = await audit(*where, *chain, env=env)
    assert code == 2 and "corrupt" in err and err.count("\n") == 1, err
