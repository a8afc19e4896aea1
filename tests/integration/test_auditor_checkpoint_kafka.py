"""ADR 044, the live auditor resuming from its checkpoint on a real broker: stopped and started
again it folds only the records written after its checkpoint (the count of records it folded
since its start is the log's less the checkpoint's), and a forgery written before the stop and
another after it are each reported once; with its checkpoint tampered with it refuses it, reads
the log from its beginning, and its fold finds the same two findings as before (already on the
topic: written and counted no more)."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest
from support.kafka import Cluster
from support.kafka_io import read_all
from support.messages import envelope
from support.prometheus import free_loopback_port
from test_auditor_live_kafka import (
    SETTLED_WITHIN_S,
    auditor_process,
    findings,
    logged,
    produce_typed,
    settled,
    violations,
)

from holdem.client.operator import Operator
from holdem.client.player import Player
from holdem.core.contracts import RoundVoided
from holdem.core.wire.headers import TYPE_HEADER, Stamp, operator_of_prefix
from holdem.core.wire.topics import Topics
from holdem.harness.auditor_service import CHECKPOINT_ENV, CHECKPOINT_NAME
from holdem.harness.chaos_auditor import scrape
from holdem.ops.acl import AUDITOR_READS
from holdem.ops.create_topics import ensure_findings_topic
from holdem.ops.launcher import Launcher, ServiceProcess

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(900)]

REPORTED_WITHIN_S = 120.0
PLAYERS = 2


async def log_records(kafka: Cluster, topics: Topics) -> int:
    """The committed records on the topics the auditor folds."""
    roles = [r for r in AUDITOR_READS if r != "seamless_replies"]
    counts = [len(await read_all(kafka.admin, topics.name(role))) for role in roles]
    return sum(counts)


async def play(operator: Operator, run: str, rounds: int) -> None:
    for n in range(PLAYERS):
        player = Player(operator, f"a{n}-{run}", step_s=SETTLED_WITHIN_S)
        await player.deposit(1_000)
        for _ in range(rounds):
            played = await player.bet(100)
            await played.dealt()
            await played.call()
            await played.outcome()


async def forge(kafka: Cluster, topics: Topics, player: str, round_id: str) -> str:
    """A round ended that was never bet, written with admin rights; the finding it makes."""
    forged = RoundVoided(**envelope(player), round_id=round_id, malfunction_id="m-1", reason="x")
    stamp = Stamp(operator_of_prefix(topics.prefix)).headers()
    await produce_typed(kafka, topics.rounds, forged, [(TYPE_HEADER, b"round.voided"), *stamp])
    return f"{player}/{round_id}: ended (round.voided) without a BetPlaced"


async def reported(auditor: ServiceProcess, port: int, count: int) -> None:
    deadline = time.monotonic() + REPORTED_WITHIN_S
    while violations(scrape(port)) < count:
        assert auditor.alive, auditor.log_tail()
        assert time.monotonic() < deadline, f"not reported in {REPORTED_WITHIN_S}s"
        await asyncio.sleep(0.2)


def event(auditor: ServiceProcess, name: str) -> dict[str, object]:
    """The one log line ``name`` since the auditor's last start."""
    lines = [line for line in logged(auditor) if line.get("event") == name]
    assert len(lines) == 1, (name, auditor.log_since_start())
    return lines[0]


async def test_restarted_from_its_checkpoint_it_reads_only_the_rest_and_finds_each_once(
    kafka: Cluster, topics: Topics, tmp_path: Path
) -> None:
    await ensure_findings_topic(kafka.admin, topics)
    launcher = Launcher(kafka.bootstrap, tmp_path, topics.prefix, 3, credentials=kafka.principals)
    port = free_loopback_port()
    directory = tmp_path / "checkpoint"
    auditor = auditor_process(kafka, topics, tmp_path, port)
    auditor.env[CHECKPOINT_ENV] = str(directory)  # the operator's way: the environment
    auditor.argv += ["--checkpoint-s", "2"]
    run = uuid.uuid4().hex[:6]
    try:
        await launcher.start(["wallet", "dealer", "settlement"])
        auditor.start()
        async with Operator(kafka.operator, topics) as operator:
            await play(operator, run, 2)
            first = await forge(kafka, topics, f"a0-{run}", f"forged-1-{run}")
            await reported(auditor, port, 1)
            await settled(auditor, port, SETTLED_WITHIN_S)
            event(auditor, "checkpoint_none")
            assert await auditor.stop() == 0, auditor.log_tail()
            assert (directory / CHECKPOINT_NAME).is_file()

            # Stopped: more rounds and a second forgery.
            await play(operator, f"{run}b", 1)
            second = await forge(kafka, topics, f"a1-{run}", f"forged-2-{run}")

            # Resumed: only the records after the checkpoint, the second forgery once.
            auditor.start()
            await reported(auditor, port, 1)
            samples = await settled(auditor, port, SETTLED_WITHIN_S)
            total = await log_records(kafka, topics)
            held = event(auditor, "checkpoint_loaded")["records"]
            assert isinstance(held, int) and 0 < held < total
            assert samples["holdem_audit_records_total"] == total - held, (samples, held, total)
            assert violations(samples) == 1, samples
            caught_up = event(auditor, "caught_up")
            assert caught_up["records"] == total and caught_up["known"] == 0, caught_up
            assert sorted(f["finding"] for f in await findings(kafka, topics)) == sorted(
                [first, second]
            )
            print(
                f"resumed: {samples['holdem_audit_records_total']:.0f} of {total} records "
                f"folded since the start ({held} in the checkpoint)"
            )

            # Tampered with: refused, the whole log again, the same findings, none written.
            assert await auditor.stop() == 0, auditor.log_tail()
            path = directory / CHECKPOINT_NAME
            data = bytearray(path.read_bytes())
            data[len(data) // 2] ^= 0x01
            path.write_bytes(bytes(data))
            auditor.start()
            samples = await settled(auditor, port, SETTLED_WITHIN_S)
            refused = event(auditor, "checkpoint_refused")
            assert "SHA-256" in str(refused["error"]) and refused["level"] == "critical", refused
            assert (directory / f"{CHECKPOINT_NAME}.refused").is_file()
            assert samples["holdem_audit_records_total"] == await log_records(kafka, topics)
            assert violations(samples) == 0, samples  # every round judged, none counted
            assert await auditor.stop() == 0, auditor.log_tail()
            stopped = event(auditor, "stopped")
            assert stopped["known"] == 2, stopped  # the from-scratch fold found both again
            assert sorted(f["finding"] for f in await findings(kafka, topics)) == sorted(
                [first, second]
            )
    finally:
        await auditor.stop()
        await launcher.stop()
