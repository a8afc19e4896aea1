"""Issue 31 items 1 and 2 (ADR 040): two ``holdem audit`` workers sharing the partitions through
a Kafka consumer group agree with one streaming fold and with the whole audit, and all three
find a forged record; ``--merge`` refuses shares that overlap or leave a partition out. (The
command line's default, streaming, is test_audit_cli_kafka.py's.)"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaTimeoutError
from support.kafka import Cluster
from support.messages import envelope

from holdem.core.contracts import RoundVoided, dump
from holdem.core.wire.headers import TYPE_HEADER, Stamp, operator_of_prefix
from holdem.core.wire.topics import Topics
from holdem.harness import audit_cli
from holdem.harness.audit import audit_run
from holdem.harness.audit_cli import report_lines
from holdem.harness.audit_fold import AuditFold
from holdem.harness.audit_stream import stream_partial
from holdem.runtime.topic_setup import ensure_topics

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench_audit import bare_read
from bench_replay import generate

# The broker's start counts (a loaded machine: over 2 min), and two runs of two worker processes.
pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]
ROUNDS = 200  # 12 players: about 2,200 records over three partitions


async def audit(*args: str, env: dict[str, str]) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "holdem.harness.audit_cli", *args, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode()


async def write_history(cluster: Cluster, topics: Topics) -> int:
    """The rounds as the services would have written them: keyed by player, typed, stamped with
    the tenant's operator, a few milliseconds apart (so rounds go quiet during the read)."""
    producer = AIOKafkaProducer(**cluster.admin.kwargs(), acks="all", linger_ms=20)
    await producer.start()
    stamp = int(time.time() * 1000) - 3_600_000
    operator = Stamp(operator_of_prefix(topics.prefix)).headers()
    try:
        sent = []
        for n, (role, event) in enumerate(generate(ROUNDS, 12)):
            headers = [(TYPE_HEADER, event.type.encode()), *operator]
            sent.append(
                await producer.send(
                    getattr(topics, role), dump(event), key=event.player_id.encode(),
                    headers=headers, timestamp_ms=stamp + 3 * n,
                )
            )  # fmt: skip
        await asyncio.gather(*sent)
        return len(sent)
    finally:
        await producer.stop()


@pytest.fixture
async def game_topics(kafka: Cluster) -> Topics:
    """The game's topics under a fresh prefix, granted: only those the audit reads (no snapshot
    topics), each creation tried again while a loaded broker is slow to list its offsets."""
    fresh = Topics.unique("audit")
    for attempt in range(4):
        try:
            await ensure_topics(kafka.admin, list(fresh.names()), partitions=3, wait=60)
            break
        except KafkaTimeoutError:
            if attempt == 3:
                raise
    await kafka.authorize(fresh.prefix)
    return fresh


def first_line(out: str) -> str:
    return next(line for line in out.splitlines() if "records" in line)


async def test_two_workers_agree_with_one_and_with_the_whole_audit_and_find_a_forgery(
    kafka: Cluster, game_topics: Topics, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topics = game_topics
    admin_file = tmp_path / "admin.env"
    admin_file.write_text("".join(f"{k}={v}\n" for k, v in kafka.admin.env().items()))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_")}
    where = ("--env-file", str(admin_file), "--prefix", topics.prefix, "--require-ended")
    written = await write_history(kafka, topics)

    # Two workers (processes: a consumer group), one streaming fold and the whole audit.
    code, out = await audit(*where, "--workers", "2", env=env)
    assert code == 0, out
    one = await stream_partial(kafka.admin, topics, AuditFold())
    whole = await audit_run(kafka.admin, topics)
    lines = {first_line(out), report_lines(AuditFold.merge([one]))[0], report_lines(whole)[0]}
    assert lines == {f"{written} records, {ROUNDS} rounds, {ROUNDS} ended: ok"}, lines
    # bench_audit's two baselines (a bare read, and read and parsed) read what the audit read.
    assert await bare_read(kafka.admin, topics) == written
    assert await bare_read(kafka.admin, topics, parsed=True) == written

    # One member's share is the whole log: merged with itself it overlaps; cut, it misses one.
    partial = await stream_partial(
        kafka.admin, topics, AuditFold(), group=f"g-{topics.prefix}", members=1
    )
    share = tmp_path / "share.json"
    share.write_text(json.dumps(partial))
    assert audit_cli.main(["--merge", str(share), str(share)]) == 2
    assert "read by more than one share" in capsys.readouterr().err
    partial["share"]["rounds"] = [0, 1]
    (tmp_path / "cut.json").write_text(json.dumps(partial))
    assert audit_cli.main(["--merge", str(tmp_path / "cut.json")]) == 2
    assert "rounds: partitions [2] read by no share" in capsys.readouterr().err
    assert audit_cli.main(["--merge", str(tmp_path / "share.json")]) == 0

    # A round ended that was never bet: every way of auditing names it and exits 1.
    forged = RoundVoided(
        **envelope("p03"), round_id="forged-r1", malfunction_id="m-1", reason="forged"
    )
    producer = AIOKafkaProducer(**kafka.admin.kwargs(), acks="all")
    await producer.start()
    try:
        headers = [*Stamp(operator_of_prefix(topics.prefix)).headers()]
        await producer.send_and_wait(topics.rounds, dump(forged), key=b"p03", headers=headers)
    finally:
        await producer.stop()
    code, out = await audit(*where, "--workers", "2", env=env)
    named = "p03/forged-r1: ended (round.voided) without a BetPlaced"
    assert code == 1 and named in out, out
    one = await stream_partial(kafka.admin, topics, AuditFold())
    assert named in AuditFold.merge([one]).violations
    assert named in (await audit_run(kafka.admin, topics)).violations
