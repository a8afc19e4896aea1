"""Issue 18 item 7: ``holdem audit`` audits a deployment's topics from the command line,
connecting from HOLDEM_KAFKA_* or --env-file, on a topic prefix, and exits 1 on a violation."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer
from support.kafka import Cluster
from support.messages import envelope

from holdem.core.contracts import RoundVoided, dump
from holdem.core.wire.headers import Stamp, operator_of_prefix
from holdem.core.wire.topics import Topics

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]


async def audit(*args: str, env: dict[str, str]) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await process.communicate()
    assert process.returncode is not None
    return process.returncode, out.decode()


def env_file(path: Path, values: dict[str, str]) -> Path:
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
    return path


def bare_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_")}


async def test_the_audit_command_line_passes_a_sound_deployment_and_fails_a_violation(
    kafka: Cluster, topics: Topics, tmp_path: Path
) -> None:
    prefix = topics.prefix
    admin_file = env_file(tmp_path / "admin.env", kafka.admin.env())
    # Nothing wrong yet: exit 0, from --env-file and --prefix ...
    code, out = await audit(
        sys.executable, "-m", "holdem.harness.audit_cli", "--env-file", str(admin_file),
        "--prefix", prefix, env=bare_env(),
    )  # fmt: skip
    assert code == 0, out
    assert "ok" in out, out
    # ... and from the HOLDEM_KAFKA_* variables and HOLDEM_TOPIC_PREFIX, as the operator.
    as_operator = {**bare_env(), **kafka.operator.env(), "HOLDEM_TOPIC_PREFIX": prefix}
    code, out = await audit("holdem", "audit", "--operator", env=as_operator)
    assert code == 0, out

    # A round ended that was never bet: the audit names it and exits 1.
    forged = RoundVoided(
        **envelope("audit-p1"), round_id="audit-r1", malfunction_id="m-1", reason="forged"
    )
    producer = AIOKafkaProducer(**kafka.admin.kwargs(), acks="all")
    await producer.start()
    try:
        headers = Stamp(operator_of_prefix(prefix)).headers()
        await producer.send_and_wait(topics.rounds, dump(forged), key=b"audit-p1", headers=headers)
    finally:
        await producer.stop()
    code, out = await audit("holdem-audit", "--env-file", str(admin_file), "--prefix", prefix,
                            env=bare_env())  # fmt: skip
    assert code == 1, out
    assert "audit-p1/audit-r1: ended (round.voided) without a BetPlaced" in out, out
