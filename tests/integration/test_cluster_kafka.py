"""A three-node cluster (RF 3, min ISR 2): one broker SIGKILLed under load and brought back loses
and doubles nothing; the services run on it unchanged."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from support.dealer import VAULT_KEYS
from support.kafka import Cluster

from holdem.client import KafkaConnection, Operator
from holdem.runtime.audit import audit_run
from holdem.runtime.broker import LocalBroker
from holdem.runtime.demo_report import strategy_for
from holdem.runtime.launcher import Launcher
from holdem.runtime.load import Plan, Tally, fund, play
from holdem.runtime.topics import Topics, ensure_topics

# The cluster's start and stop are in the bound: three JVMs and three services on two cores.
pytestmark = [pytest.mark.kafka, pytest.mark.timeout(420)]

NODES = 3
PARTITIONS = 3
BEFORE_S = 8.0  # load on the whole cluster before the kill
DOWN_S = 6.0  # the node stays dead this long, the load going on against two
STEP_S = 90.0  # bound on each wait of a round: leaders move, the coordinators too
DRAIN_S = 150.0  # bound on the rounds in flight once the load stops


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[tuple[LocalBroker, Cluster]]:
    """A cluster of its own (not the session's broker); down and wiped even when the test fails
    (and by kafka.sh's watchdog should this process be killed outright)."""
    broker = LocalBroker(tmp_path / "kafka", nodes=NODES)
    try:
        bootstrap = await asyncio.to_thread(broker.up)
        yield broker, Cluster(bootstrap, broker.principals())
    finally:
        await asyncio.to_thread(broker.down, wipe=True)


async def replicas(admin: KafkaConnection, names: list[str]) -> dict[str, tuple[int, ...]]:
    """Per topic: the replica count of each partition, and (key "leaders") the leader of each."""
    client = AIOKafkaAdminClient(**admin.kwargs())
    await client.start()
    try:
        described = await client.describe_topics(names)
    finally:
        await client.close()
    found = {t["topic"]: tuple(len(p["replicas"]) for p in t["partitions"]) for t in described}
    found["leaders"] = tuple(p["leader"] for t in described for p in t["partitions"])
    return found


async def kill_and_restore(broker: LocalBroker, node: int, tally: Tally) -> list[int]:
    """SIGKILL ``node`` mid-load, start it again after DOWN_S; the rounds ended at each step."""
    await asyncio.sleep(BEFORE_S)
    seen = [tally.rounds]
    await asyncio.to_thread(broker.kill_node, node)
    await asyncio.sleep(DOWN_S)
    seen.append(tally.rounds)
    await asyncio.to_thread(broker.start_node, node)
    seen.append(tally.rounds)
    await asyncio.sleep(BEFORE_S)  # and the load goes on against the whole cluster again
    return seen


async def test_a_broker_killed_under_load_loses_and_doubles_nothing(
    cluster: tuple[LocalBroker, Cluster], tmp_path: Path
) -> None:
    broker, kafka = cluster
    started = time.monotonic()
    topics = Topics.unique("cluster")
    prefix = topics.commands.removesuffix(".holdem.commands")
    await ensure_topics(kafka.admin, topics, partitions=PARTITIONS, wait=60)
    await kafka.authorize(prefix)
    layout = await replicas(kafka.admin, list(topics.names()))
    leaders = Counter(layout.pop("leaders"))
    assert set(layout.values()) == {(NODES,) * PARTITIONS}, layout  # RF 3 on every partition
    victim = leaders.most_common(1)[0][0]  # the node leading most of the run's partitions

    vault = {"HOLDEM_DEALER_VAULT_KEYS": VAULT_KEYS}
    launcher = Launcher(
        kafka.bootstrap, tmp_path, prefix, PARTITIONS, extra_env=vault, credentials=kafka.principals
    )
    plan = Plan(rounds=100_000, players=6, step_s=STEP_S)
    tally = Tally()
    async with launcher, Operator(kafka.operator, topics, PARTITIONS) as client:
        await fund(client, plan)
        stop = asyncio.Event()
        load = asyncio.create_task(play(client, plan, strategy_for("basic"), stop, tally))
        try:
            seen = await kill_and_restore(broker, victim, tally)
        finally:
            stop.set()
        await asyncio.wait_for(load, DRAIN_S)
        alive = {name: s.alive for name, s in launcher.services.items()}
        report = await audit_run(kafka.admin, topics)

    logs = f"(service logs in {tmp_path}, broker logs in {broker.run_dir})"
    print(
        f"\ncluster: node {victim} of {NODES} killed after {seen[0]} rounds, {seen[1]} when it "
        f"came back, {seen[2]} once it served, {tally.rounds} in all {dict(tally.outcomes)}; "
        f"{report.records} records audited; {time.monotonic() - started:.0f}s"
    )
    assert all(alive.values()), f"a service died with the broker: {alive} {logs}"
    assert tally.rounds > seen[2], f"no round ended after the node came back {logs}"
    assert not tally.stalled, f"rounds that never ended for the player: {tally.stalled} {logs}"
    assert report.ok, "invariants broken:\n  " + "\n  ".join(report.violations[:30]) + logs
    assert report.rounds == report.ended == tally.rounds > 0, (report, tally.outcomes)
