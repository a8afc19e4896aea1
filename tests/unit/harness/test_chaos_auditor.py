"""`make chaos`'s live auditor without a broker: it runs as the auditor principal on the
phase's topics with a checkpoint directory, is started again when it exits unasked (not more
often than RESTART_S), is killed once among a phase's actions, and is at the log's end only when
ready with no lag and no round held."""

from __future__ import annotations

import asyncio
import random
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics
from holdem.harness import chaos_auditor
from holdem.harness.auditor_service import CHECKPOINT_ENV
from holdem.harness.chaos import Chaos, Figures, schedule
from holdem.harness.chaos_auditor import LiveAuditor, at_the_end

AUDITOR = KafkaConnection(
    "127.0.0.1:1", "SASL_PLAINTEXT", "SCRAM-SHA-512", username="auditor", password="pw"
)


def test_it_runs_as_the_auditor_on_the_phases_topics_with_a_checkpoint(tmp_path: Path) -> None:
    topics = Topics().with_prefix("chaos-single-1")
    auditor = LiveAuditor.of(AUDITOR, topics, tmp_path)
    env = auditor.process.env
    assert env["HOLDEM_KAFKA_SASL_USERNAME"] == "auditor"
    assert env["HOLDEM_TOPIC_PREFIX"] == "chaos-single-1"
    assert env[CHECKPOINT_ENV] == str(tmp_path / "auditor-checkpoint")
    assert env["HOLDEM_METRICS_PORT"] == str(auditor.port) and auditor.port > 0
    assert auditor.process.argv[1:3] == ["-m", "holdem.harness.auditor_service"]


async def test_an_exit_is_followed_by_a_start_not_more_often_than_restart_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chaos_auditor, "RESTART_S", 1.0)
    monkeypatch.setattr(chaos_auditor, "SUPERVISE_S", 0.05)
    auditor = LiveAuditor.of(AUDITOR, Topics(), tmp_path)
    auditor.process.argv = [sys.executable, "-c", "raise SystemExit(70)"]  # a broker away
    began = time.monotonic()
    supervising = asyncio.create_task(auditor.supervise())
    async with asyncio.timeout(30):
        while auditor.process.starts < 3:
            await asyncio.sleep(0.05)
    assert time.monotonic() - began >= 2 * 1.0
    auditor.stopping = True
    await asyncio.wait_for(supervising, 5)
    assert auditor.exits["70"] >= 2


async def test_a_kill_is_one_of_the_phases_actions_and_is_counted(tmp_path: Path) -> None:
    auditor = LiveAuditor.of(AUDITOR, Topics(), tmp_path)
    none: Any = None
    chaos = Chaos(none, none, Figures("single"), none, random.Random(1), auditor)
    names = [action.__name__ for _, action in schedule(chaos, 100, 4, 1, node=False)]
    assert names.count("kill_auditor") == 1
    without = Chaos(none, none, Figures("single"), none, random.Random(1))
    assert "kill_auditor" not in [a.__name__ for _, a in schedule(without, 100, 4, 1, False)]
    auditor.process.argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    auditor.process.start()
    await chaos.kill_auditor()
    assert auditor.kills == 1 and not auditor.process.alive


def test_at_the_end_means_ready_no_lag_and_no_round_held() -> None:
    end = {
        "holdem_audit_ready": 1.0,
        "holdem_audit_lag_records": 0.0,
        "holdem_audit_lag_seconds": 0.0,
        "holdem_audit_rounds_held": 0.0,
    }
    assert at_the_end(end)
    assert not at_the_end({})
    for name in end:
        assert not at_the_end({**end, name: 1.0 - end[name] if name.endswith("ready") else 3.0})
