"""Chaos: kill -9 each service at random moments under a steady load; nothing lost or doubled."""

from __future__ import annotations

import asyncio
import os
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.dealer import VAULT_KEYS
from support.kafka import Cluster

from holdem.client import KafkaConnection, Operator
from holdem.runtime.audit import audit_run
from holdem.runtime.demo_report import strategy_for
from holdem.runtime.launcher import SERVICES, Launcher
from holdem.runtime.load import Plan, Tally, fund, play
from holdem.runtime.topics import Topics, ensure_topics

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(330)]

PARTITIONS = 3
EXTRA_KILLS = 2  # beyond one kill of each service
ALIVE_S = (2.0, 6.0)  # a service runs this long (uniform) between its restart and the next kill
DOWN_S = (0.0, 3.0)  # and stays dead this long before it is started again
STEP_S = 120.0  # bound on each wait of a round: a restart takes ~10 s (the dead member's session)
DRAIN_S = 180.0  # bound on the rounds in flight once the kills are over


@dataclass
class Chaos:
    """The kills done, in order, with the seconds each service took to be ready again."""

    seed: int
    kills: list[tuple[str, float, int]] = field(default_factory=list)  # name, s, events replayed

    def describe(self) -> str:
        done = ", ".join(f"{n} ({s:.1f}s, replayed {e})" for n, s, e in self.kills)
        return f"seed {self.seed}; kill -9 + restart: {done}"


async def kill_at_random(launcher: Launcher, chaos: Chaos) -> None:
    """Each service once in random order, then EXTRA_KILLS random ones, at random moments."""
    rng = random.Random(chaos.seed)
    victims = rng.sample(SERVICES, len(SERVICES))
    victims += [rng.choice(SERVICES) for _ in range(EXTRA_KILLS)]
    for name in victims:
        await asyncio.sleep(rng.uniform(*ALIVE_S))
        seconds = await launcher.restart(name, down_s=rng.uniform(*DOWN_S))
        replayed = sum(r.get("events", 0) for r in launcher.services[name].replays())
        chaos.kills.append((name, seconds, replayed))


async def load_under_chaos(launcher: Launcher, operator: KafkaConnection, topics: Topics) -> Tally:
    # Ended by `stop`; every 25th round is voided by the operator, so refunds face crashes too.
    plan = Plan(rounds=100_000, players=8, voids=4_000, step_s=STEP_S)
    chaos = Chaos(seed=int(os.environ.get("CHAOS_SEED", random.randrange(2**32))))
    async with Operator(operator, topics, PARTITIONS) as client:
        await fund(client, plan)
        stop = asyncio.Event()
        load = asyncio.create_task(play(client, plan, strategy_for("basic"), stop))
        try:
            await kill_at_random(launcher, chaos)
        finally:
            stop.set()
        tally = await asyncio.wait_for(load, DRAIN_S)
    print(f"\nchaos: {chaos.describe()}; {tally.rounds} rounds, {dict(tally.outcomes)}")
    assert sorted({name for name, *_ in chaos.kills}) == sorted(SERVICES), chaos.describe()
    return tally


async def test_services_killed_at_random_moments_lose_and_double_nothing(
    kafka: Cluster, tmp_path: Path
) -> None:
    topics = Topics.unique("chaos")
    prefix = topics.commands.removesuffix(".holdem.commands")
    await ensure_topics(kafka.admin, topics, partitions=PARTITIONS, wait=60)
    await kafka.authorize(prefix)
    started = time.monotonic()

    vault = {"HOLDEM_DEALER_VAULT_KEYS": VAULT_KEYS}  # one key across the dealer's restarts
    launcher = Launcher(
        kafka.bootstrap, tmp_path, prefix, PARTITIONS, extra_env=vault, credentials=kafka.principals
    )
    async with launcher:
        tally = await load_under_chaos(launcher, kafka.operator, topics)
        report = await audit_run(kafka.admin, topics)

    logs = f"(service logs in {tmp_path})"
    assert not tally.stalled, f"rounds that never ended for the player: {tally.stalled} {logs}"
    assert report.ok, "invariants broken:\n  " + "\n  ".join(report.violations[:30]) + logs
    assert report.rounds == report.ended == tally.rounds > 0, (report, tally.outcomes)
    print(f"chaos: {report.records} records audited; {time.monotonic() - started:.0f}s in all")
