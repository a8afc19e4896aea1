"""Static membership under the instance id (KIP-345, ADR 037), on wallet processes and a real
broker.

- A killed instance restarted with its id takes its own partitions back and the other instance
  does not notice: no rebalance, so the survivor rebuilds nothing. That is what static
  membership guarantees while the restart comes within the session timeout. The test gives the
  group a session of 240 s, so that a restart on a machine at load average 60 still comes within
  it; what it asserts is the guarantee, not how fast anything was. With dynamic members (static
  off) the restarted process joins as a new member and the survivor is revoked and rebuilds.
- A second process started with a live instance's id: the broker gives it the place and fences
  the first, whose heartbeat names its instance id; the first ends with status 70 and one
  critical line saying so. (With aiokafka's own heartbeat, which names no instance id, the two
  took the place from each other every second and both stayed up.)"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support.kafka import Cluster

from holdem.core.wire.topics import Topics
from holdem.ops.launcher import Launcher, ServiceProcess

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]

PARTITIONS = 3  # the topics fixture's
EXIT_FATAL = 70
SESSION_MS = 240_000  # longer than any restart here, even at load average 60
WITHIN_S = 240.0  # bound of every wait: a lost restart fails the test, it never hangs it
FENCED = "fenced: another process joined the group with this HOLDEM_INSTANCE_ID"


@pytest.fixture
async def launcher(kafka: Cluster, topics: Topics, tmp_path: Path) -> AsyncIterator[Launcher]:
    prefix = topics.commands.removesuffix(".holdem.commands")
    extra = {"HOLDEM_SESSION_TIMEOUT_MS": str(SESSION_MS), "HOLDEM_STATIC_MEMBERSHIP": "true"}
    services = Launcher(
        kafka.bootstrap, tmp_path, prefix, PARTITIONS, extra_env=extra, credentials=kafka.principals
    )
    try:
        yield services
    finally:
        await services.stop()


def owned(service: ServiceProcess) -> list[int]:
    """The partitions of the instance's last rebuild since its start."""
    replays = service.replays()
    return list(replays[-1]["partitions"]) if replays else []


def generations(text: str) -> list[int]:
    """The group generations aiokafka logged joining, in order."""
    return [int(found) for found in re.findall(r"Joined group '[^']+' \(generation (\d+)\)", text)]


def leads(service: ServiceProcess) -> bool:
    """Whether the instance's last join made it the group's leader (aiokafka's log line)."""
    joins = service.log_since_start().split("Joined group")
    return "Elected group leader" in joins[-1]


async def until_split(first: ServiceProcess, second: ServiceProcess) -> None:
    """Until the two instances' last rebuilds split the partitions between them."""
    deadline = time.monotonic() + WITHIN_S
    while True:
        a, b = set(owned(first)), set(owned(second))
        if a and b and not a & b and a | b == set(range(PARTITIONS)):
            return
        assert first.alive and second.alive, f"{first.log_tail()}\n{second.log_tail()}"
        assert time.monotonic() < deadline, f"never split: {a}, {b}"
        await asyncio.sleep(0.2)


async def test_a_killed_instance_restarted_with_its_id_takes_its_place_without_a_rebalance(
    launcher: Launcher,
) -> None:
    await launcher.start(["wallet"], within_s=WITHIN_S)
    await launcher.add("wallet", within_s=WITHIN_S)
    pair = [launcher.services["wallet"], launcher.services["wallet-1"]]
    await until_split(*pair)
    # The member that is not the group's leader: a restarted leader may still cost a rebalance
    # on the JoinGroup version aiokafka sends (v5; KIP-814's skip_assignment is v9), ADR 037.
    survivor, victim = sorted(pair, key=lambda service: not leads(service))
    mine, generation = owned(victim), generations(victim.log_since_start())[-1]
    seen = len(survivor.log_since_start())

    victim.kill()
    victim.start()  # the same HOLDEM_INSTANCE_ID: the same group.instance.id
    await victim.wait_ready(WITHIN_S)

    # Static membership's guarantee: the restart takes the member's place in the generation it
    # left, with its partitions; the survivor is neither revoked nor rebuilds. (A dynamic
    # member joins a new generation, and the survivor is revoked before it is assigned.)
    assert generations(victim.log_since_start()) == [generation], victim.log_tail()
    assert owned(victim) == mine, victim.log_tail()
    since_kill = survivor.log_since_start()[seen:]
    assert "Revoking previously assigned partitions" not in since_kill, survivor.log_tail()
    assert survivor.alive and '"event": "replayed"' not in since_kill, survivor.log_tail()


async def test_a_second_process_with_a_live_instances_id_fences_it_and_it_says_so(
    launcher: Launcher,
) -> None:
    await launcher.start(["wallet"], within_s=WITHIN_S)
    original = launcher.services["wallet"]
    twin = ServiceProcess(
        "wallet", dict(original.env), launcher.log_dir / "wallet-twin.log", label="wallet-twin"
    )
    launcher.services[twin.label] = twin  # stopped with the others
    twin.start()
    await twin.wait_ready(WITHIN_S)

    deadline = time.monotonic() + WITHIN_S
    while original.alive:
        assert time.monotonic() < deadline, f"both stayed up:\n{original.log_tail()}"
        await asyncio.sleep(0.2)
    assert original.exit_code == EXIT_FATAL, original.log_tail()
    critical = [
        line for line in original.log_since_start().splitlines() if '"level": "critical"' in line
    ]
    assert len(critical) == 1 and FENCED in critical[0], original.log_tail()
    assert twin.alive, twin.log_tail()
