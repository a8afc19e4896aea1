"""Issue 26 item 4, ADR 043, on service processes and a real broker: when one of two instances of
a service is killed -9, its twin keeps the state of the partitions it held and rebuilds only
the dead one's; its decisions afterwards are right (every round settles, the audit is clean).

The survivor's ``replayed`` line after the kill serves every partition, ``kept`` the ones it
held and ``rebuilt`` the dead one's. Before ADR 043 it rebuilt every partition (and logged no
``kept``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from support.kafka import Cluster

from holdem.client import Operator, Player
from holdem.core.contracts import Settled
from holdem.core.wire.partitioning import partition_for_key
from holdem.core.wire.topics import Topics
from holdem.harness.audit import audit_run
from holdem.ops.launcher import Launcher, ServiceProcess

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(900)]

PARTITIONS = 3  # the topics fixture's
WITHIN_S = 240.0  # bound of every wait: a lost hand-over fails the test, it never hangs it
EVERY = list(range(PARTITIONS))


@pytest.fixture
async def launcher(kafka: Cluster, topics: Topics, tmp_path: Path) -> AsyncIterator[Launcher]:
    prefix = topics.commands.removesuffix(".holdem.commands")
    # Snapshots often, so that the rebuilt partition loads one and replays its tail.
    extra = {"HOLDEM_SNAPSHOT_INTERVAL_S": "1"}
    services = Launcher(
        kafka.bootstrap, tmp_path, prefix, PARTITIONS, extra_env=extra, credentials=kafka.principals
    )
    try:
        yield services
    finally:
        await services.stop()


def player_on(partition: int, tag: str) -> str:
    """A player id whose records are on ``partition``."""
    n = 0
    while partition_for_key(f"{tag}-{n}".encode(), PARTITIONS) != partition:
        n += 1
    return f"{tag}-{n}"


async def a_round_on_every_partition(kafka: Cluster, topics: Topics, tag: str) -> None:
    """A player per partition deposits and plays a round to its settlement."""
    async with Operator(kafka.operator, topics, PARTITIONS) as client:

        async def play(partition: int) -> None:
            player = Player(client, player_on(partition, tag), step_s=WITHIN_S)
            await player.deposit(10_000)
            played = await player.bet(100)
            await played.dealt()
            await played.call()
            outcome = await played.outcome()
            assert isinstance(outcome.end, Settled), outcome

        await asyncio.gather(*(play(p) for p in EVERY))


def owned(service: ServiceProcess) -> list[int]:
    """The partitions of the instance's last rebuild since its start: what it serves."""
    replays = service.replays()
    return sorted(replays[-1]["partitions"]) if replays else []


async def until_split(first: ServiceProcess, second: ServiceProcess) -> None:
    deadline = time.monotonic() + WITHIN_S
    while True:
        a, b = set(owned(first)), set(owned(second))
        if a and b and not a & b and a | b == set(EVERY):
            return
        assert first.alive and second.alive, f"{first.log_tail()}\n{second.log_tail()}"
        assert time.monotonic() < deadline, f"never split: {a}, {b}"
        await asyncio.sleep(0.2)


async def serving_every_partition(survivor: ServiceProcess, before: int) -> dict[str, Any]:
    """The survivor's first rebuild since ``before`` that serves every partition."""
    deadline = time.monotonic() + WITHIN_S
    while True:
        found = [r for r in survivor.replays()[before:] if sorted(r["partitions"]) == EVERY]
        if found:
            return found[0]
        assert survivor.alive, survivor.log_tail()
        assert time.monotonic() < deadline, survivor.log_tail()
        await asyncio.sleep(0.1)


@pytest.mark.parametrize("name", ["wallet", "dealer"])
async def test_the_survivor_of_a_kill_keeps_its_partitions_and_rebuilds_only_the_dead_ones(
    launcher: Launcher, kafka: Cluster, topics: Topics, name: str
) -> None:
    await launcher.start(within_s=WITHIN_S)
    await a_round_on_every_partition(kafka, topics, "before")
    label, _ = await launcher.add(name, within_s=WITHIN_S)
    first, second = launcher.services[name], launcher.services[label]
    await until_split(first, second)
    await a_round_on_every_partition(kafka, topics, "split")  # both deciding
    survivor, victim = first, second
    mine, theirs = owned(survivor), owned(victim)
    before = len(survivor.replays())

    victim.kill()
    line = await serving_every_partition(survivor, before)

    # What it held it kept; the dead twin's it rebuilt. (Before ADR 043: every one rebuilt.)
    assert line.get("kept") == mine, line
    assert line.get("rebuilt") == theirs, line
    # Its decisions stay right: rounds on every partition, the kept and the rebuilt, settle,
    # and the whole log breaks no invariant.
    await a_round_on_every_partition(kafka, topics, "after")
    report = await audit_run(kafka.admin, topics)
    assert report.ok, report.violations[:10]
