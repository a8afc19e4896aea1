"""`make run`'s demo as a subprocess on the session broker: N rounds played, the audit passes."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from support.dealer import VAULT_KEYS
from support.kafka import Cluster

from holdem.core.wire.topics import Topics
from holdem.runtime.topic_setup import ensure_topics

pytestmark = pytest.mark.kafka

ROUNDS = 20
DEMO_TIMEOUT_S = 240  # services start in ~10 s and 20 rounds take seconds; this only bounds a hang


def service_logs(log_dir: Path, lines: int = 40) -> str:
    tails = []
    for log in sorted(log_dir.glob("*.log")):
        text = log.read_text(encoding="utf-8", errors="replace").splitlines()
        tails.append(f"--- {log.name}\n" + "\n".join(text[-lines:]))
    return "\n".join(tails)


async def test_the_demo_plays_the_rounds_asked_for_and_its_audit_passes(
    kafka: Cluster, tmp_path: Path
) -> None:
    # An outside broker for the demo: its principals' env files, its topics granted by admin.
    prefix = f"smoke-{uuid.uuid4().hex[:12]}"
    await ensure_topics(kafka.admin, Topics().with_prefix(prefix), partitions=3, wait=60)
    await kafka.authorize(prefix)
    clients = tmp_path / "clients"
    clients.mkdir()
    for name, connection in kafka.principals.items():
        lines = (f"{key}={value}" for key, value in connection.env().items())
        (clients / f"{name}.env").write_text("\n".join(lines) + "\n")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_KAFKA_")},
        "HOLDEM_KAFKA_BOOTSTRAP": kafka.bootstrap,
        "HOLDEM_KAFKA_CLIENTS_DIR": str(clients),
        "HOLDEM_TOPIC_PREFIX": prefix,
        "HOLDEM_PARTITIONS": "3",
        "HOLDEM_DEALER_VAULT_KEYS": VAULT_KEYS,  # the dealer does not deal without one
    }
    command = [sys.executable, "-m", "holdem.harness.demo", "--rounds", str(ROUNDS)]
    command += ["--players", "4", "--no-metrics", "--no-exact", "--log-dir", str(tmp_path)]

    done = await asyncio.to_thread(
        subprocess.run,
        command,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEMO_TIMEOUT_S,
        check=False,
    )

    report = f"{done.stdout}\n{done.stderr[-4000:]}\n{service_logs(tmp_path)}"
    assert done.returncode == 0, report
    assert re.search(rf"^rounds: {ROUNDS} \(of {ROUNDS} asked\)$", done.stdout, re.M), report
    assert re.search(r"^invariants: OK ", done.stdout, re.M), report
    assert re.search(r"^speed: [0-9.]+ rounds/s through Kafka", done.stdout, re.M), report
    # not a terminal: plain progress lines instead of the live panel, the last one at the end
    assert re.search(rf"^progress: {ROUNDS}/{ROUNDS} rounds, .* main RTP ", done.stdout, re.M)
    picture = re.search(r"^picture: (\S+\.png) ", done.stdout, re.M)
    assert picture, report
    assert Path(picture.group(1)).read_bytes().startswith(b"\x89PNG"), report  # noqa: ASYNC240
