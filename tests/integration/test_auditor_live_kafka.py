"""Issue 31 item 4, the live auditor on a real broker: its principal may not read the vault nor
write a game topic; the services play rounds and it folds them as they are written (lag 0, every
round judged, no finding); a ``round.voided`` for a round never bet, written with admin rights,
is reported (counted, and written to the findings topic) without any later record; restarted,
it writes and counts nothing twice."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
import uuid
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.errors import TopicAuthorizationFailedError
from support.kafka import Cluster
from support.kafka_io import produce, read_all
from support.messages import envelope
from support.prometheus import free_loopback_port

from holdem.client.operator import Operator
from holdem.client.player import Player
from holdem.core.contracts import RoundVoided, dump
from holdem.core.wire.headers import TYPE_HEADER, Stamp, operator_of_prefix
from holdem.core.wire.topics import Topics
from holdem.harness.chaos_auditor import scrape
from holdem.ops.acl import findings_topic
from holdem.ops.create_topics import ensure_findings_topic
from holdem.ops.launcher import Launcher, ServiceProcess

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(900)]

GRACE_S = 3  # the wall clock less this is the fold's clock on a quiet log
REPORTED_WITHIN_S = 120.0  # generous: a loaded machine; measured here in seconds, printed
SETTLED_WITHIN_S = 180.0
PLAYERS, ROUNDS = 2, 3  # rounds per player


def auditor_process(kafka: Cluster, topics: Topics, log_dir: Path, port: int) -> ServiceProcess:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_")},
        **kafka.connection("auditor").env(),
        "HOLDEM_TOPIC_PREFIX": topics.prefix,
        "PYTHONUNBUFFERED": "1",
    }
    argv = [
        sys.executable, "-m", "holdem.harness.auditor_service", "--grace-s", str(GRACE_S),
        "--metrics-port", str(port), "--metrics-host", "127.0.0.1",
    ]  # fmt: skip
    return ServiceProcess("auditor", env, log_dir / "auditor.log", argv=argv)


def violations(samples: dict[str, float]) -> float:
    return sum(v for k, v in samples.items() if k.startswith("holdem_audit_violations_total{"))


async def settled(auditor: ServiceProcess, port: int, within_s: float) -> dict[str, float]:
    """The auditor's samples once it is ready, at lag 0 and holding no round."""
    deadline = time.monotonic() + within_s
    while True:
        samples = scrape(port)
        if (
            samples.get("holdem_audit_ready") == 1
            and samples.get("holdem_audit_lag_records") == 0
            and samples.get("holdem_audit_rounds_held") == 0
        ):
            return samples
        assert auditor.alive, f"the auditor exited:\n{auditor.log_tail()}"
        assert time.monotonic() < deadline, f"not settled in {within_s}s: {samples}\n" + (
            auditor.log_tail()
        )
        await asyncio.sleep(0.5)


def logged(process: ServiceProcess) -> list[dict[str, object]]:
    """The JSON log lines of the process since its last start."""
    lines = process.log_since_start().splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


async def findings(kafka: Cluster, topics: Topics) -> list[dict[str, str]]:
    return [json.loads(r.value) for r in await read_all(kafka.admin, findings_topic(topics))]


async def test_the_auditor_may_not_read_the_vault_nor_write_a_game_topic(
    kafka: Cluster, topics: Topics
) -> None:
    await ensure_findings_topic(kafka.admin, topics)
    auditor = kafka.connection("auditor")
    for topic in (topics.vault, topics.admin):
        await produce(kafka.admin, topic, "p1", b"secret")
        with pytest.raises(TopicAuthorizationFailedError):
            await read_all(auditor, topic)
    for topic in (topics.commands, topics.rounds, topics.wallet):
        with pytest.raises(TopicAuthorizationFailedError):
            await produce(auditor, topic, "p1", b"forged")
    await read_all(auditor, topics.rounds)  # but it reads the game
    await produce(auditor, findings_topic(topics), "k", b"{}")  # and writes its findings


async def test_the_live_auditor_keeps_up_reports_a_forgery_and_restarted_repeats_nothing(
    kafka: Cluster, topics: Topics, tmp_path: Path
) -> None:
    await ensure_findings_topic(kafka.admin, topics)
    launcher = Launcher(kafka.bootstrap, tmp_path, topics.prefix, 3, credentials=kafka.principals)
    port = free_loopback_port()
    auditor = auditor_process(kafka, topics, tmp_path, port)
    run = uuid.uuid4().hex[:6]
    try:
        await launcher.start(["wallet", "dealer", "settlement"])
        auditor.start()
        async with Operator(kafka.operator, topics) as operator:
            for n in range(PLAYERS):
                player = Player(operator, f"a{n}-{run}", step_s=SETTLED_WITHIN_S)
                await player.deposit(10_000)
                for k in range(ROUNDS):
                    played = await player.bet(100)
                    await played.dealt()
                    await (played.call() if k % 2 == 0 else played.fold())
                    await played.outcome()

        # Rounds played: read to the end, every round judged, nothing found.
        samples = await settled(auditor, port, SETTLED_WITHIN_S)
        assert violations(samples) == 0, samples
        assert samples["holdem_audit_lag_seconds"] == 0, samples
        assert samples["holdem_audit_records_total"] > PLAYERS * ROUNDS * 5, samples
        assert await findings(kafka, topics) == []

        # A round ended that was never bet, written with admin rights: reported on its own.
        forged = RoundVoided(
            **envelope(f"a0-{run}"), round_id=f"forged-{run}", malfunction_id="m-1", reason="x"
        )
        stamp = Stamp(operator_of_prefix(topics.prefix)).headers()
        written = time.monotonic()
        await produce_typed(kafka, topics.rounds, forged, [(TYPE_HEADER, b"round.voided"), *stamp])
        deadline = written + REPORTED_WITHIN_S
        while violations(scrape(port)) < 1:
            assert auditor.alive, auditor.log_tail()
            assert time.monotonic() < deadline, f"not reported in {REPORTED_WITHIN_S}s"
            await asyncio.sleep(0.2)
        print(f"forgery reported {time.monotonic() - written:.1f}s after it was written")
        named = f"a0-{run}/forged-{run}: ended (round.voided) without a BetPlaced"
        found = await findings(kafka, topics)
        assert [f["finding"] for f in found] == [named], found
        assert scrape(port)["holdem_audit_violations_total{invariant=round}"] == 1

        # Restarted: it folds the log again and finds the forgery again, writes and counts none.
        assert await auditor.stop() == 0, auditor.log_tail()
        auditor.start()
        samples = await settled(auditor, port, SETTLED_WITHIN_S)
        assert violations(samples) == 0, samples
        read = [line for line in logged(auditor) if line.get("event") == "findings_read"]
        assert [line["findings"] for line in read] == [1], auditor.log_since_start()
        assert [f["finding"] for f in await findings(kafka, topics)] == [named]
    finally:
        await auditor.stop()
        await launcher.stop()


async def produce_typed(
    kafka: Cluster, topic: str, event: RoundVoided, headers: list[tuple[str, bytes]]
) -> None:
    producer = AIOKafkaProducer(**kafka.admin.kwargs(), acks="all")
    await producer.start()
    try:
        key = event.player_id.encode()
        await producer.send_and_wait(topic, dump(event), key=key, headers=headers)
    finally:
        await producer.stop()
