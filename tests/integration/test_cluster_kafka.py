"""A three-node cluster (RF 3, min ISR 2): one broker SIGKILLed under load and brought back loses
and doubles nothing; the services run on it unchanged."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from support.dealer import VAULT_KEYS
from support.kafka import Cluster

from holdem.client import KafkaConnection, Operator
from holdem.core.wire.topics import Topics
from holdem.harness.audit import AuditReport, audit_run
from holdem.harness.demo_report import strategy_for
from holdem.harness.load import Plan, Tally, fund, play
from holdem.ops.broker import LocalBroker
from holdem.ops.launcher import Launcher
from holdem.runtime.topic_setup import ensure_topics

# The cluster's start and stop are in the bound: three JVMs and three services on two cores.
pytestmark = [pytest.mark.kafka, pytest.mark.timeout(420)]

NODES = 3
PARTITIONS = 3
ROUNDS_PER_PHASE = 8  # rounds that end before the kill, while the node is dead, after its start
PHASE_S = 120.0  # bound on each phase: a dead leader is noticed after broker.session.timeout.ms
STEP_S = 90.0  # bound on each wait of a round: leaders move, the coordinators too
DRAIN_S = 150.0  # bound on the rounds in flight once the load stops
INTERNAL = ("__consumer_offsets", "__transaction_state")


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


async def partitions(admin: KafkaConnection, names: list[str]) -> list[dict[str, Any]]:
    """Every partition of these topics as the metadata describes it (leader, replicas, isr)."""
    client = AIOKafkaAdminClient(**admin.kwargs())
    await client.start()
    try:
        described = await client.describe_topics(names)
    finally:
        await client.close()
    return [p | {"topic": t["topic"]} for t in described for p in t["partitions"]]


async def until(found: Callable[[], Awaitable[bool]], what: str, within_s: float) -> None:
    """Poll ``found`` until it holds; fail naming ``what`` after ``within_s`` (a bound, not a
    speed requirement: a lost record or a stuck client fails instead of hanging)."""
    deadline = time.monotonic() + within_s
    while not await found():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within_s:.0f}s: {what}")
        await asyncio.sleep(0.5)


async def more_rounds(tally: Tally, what: str) -> tuple[int, float]:
    """Wait until ROUNDS_PER_PHASE more rounds have ended: the count it started from, and the
    seconds until the first of them ended (printed: how long the load stalled, if it did)."""
    start, began, first = tally.rounds, time.monotonic(), []

    async def enough() -> bool:
        if not first and tally.rounds > start:
            first.append(time.monotonic() - began)
        return tally.rounds >= start + ROUNDS_PER_PHASE

    await until(enough, f"{ROUNDS_PER_PHASE} rounds {what} (from {start})", PHASE_S)
    return start, first[0]


async def kill_and_restore(broker: LocalBroker, node: int, tally: Tally) -> list[tuple[int, float]]:
    """Load on three nodes, SIGKILL ``node``, load on the two left, start it again, load on
    three: each phase lasts until rounds end in it. Per phase: the rounds ended when it began,
    the seconds until its first round ended."""
    seen = [await more_rounds(tally, "on the whole cluster")]
    await asyncio.to_thread(broker.kill_node, node)
    seen.append(await more_rounds(tally, f"with node {node} dead"))
    await asyncio.to_thread(broker.start_node, node)
    seen.append(await more_rounds(tally, f"after node {node} came back"))
    return seen


async def in_sync(admin: KafkaConnection, names: list[str]) -> bool:
    """Every partition (internal ones too) has its NODES replicas, all in sync again."""
    found = await partitions(admin, names)
    complete = {p["topic"] for p in found} == set(names)
    return complete and all(len(p["replicas"]) == len(p["isr"]) == NODES for p in found)


async def min_insync(admin: KafkaConnection, topic: str) -> str:
    """The topic's min.insync.replicas as the broker reports it."""
    client = AIOKafkaAdminClient(**admin.kwargs())
    await client.start()
    try:
        [response] = await client.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, topic)]
        )
    finally:
        await client.close()
    [(*_, entries)] = response.resources
    return next(str(e[1]) for e in entries if e[0] == "min.insync.replicas")


async def deployment(kafka: Cluster, tmp_path: Path, tag: str) -> tuple[Topics, Launcher]:
    """Fresh topics (RF 3) authorized for the services, and a launcher of the three services."""
    topics = Topics.unique(tag)
    prefix = topics.commands.removesuffix(".holdem.commands")
    await ensure_topics(kafka.admin, topics, partitions=PARTITIONS, wait=60)
    await kafka.authorize(prefix)
    vault = {"HOLDEM_DEALER_VAULT_KEYS": VAULT_KEYS}
    launcher = Launcher(
        kafka.bootstrap, tmp_path, prefix, PARTITIONS, extra_env=vault, credentials=kafka.principals
    )
    return topics, launcher


def assert_clean(alive: dict[str, bool], tally: Tally, report: AuditReport, logs: str) -> None:
    """Every service alive, every round ended for its player and in the log, the audit clean."""
    assert all(alive.values()), f"a service died: {alive} {logs}"
    assert not tally.stalled, f"rounds that never ended for the player: {tally.stalled} {logs}"
    assert report.ok, "invariants broken:\n  " + "\n  ".join(report.violations[:30]) + logs
    assert report.rounds == report.ended == tally.rounds > 0, (report, tally.outcomes)


async def test_a_broker_killed_under_load_loses_and_doubles_nothing(
    cluster: tuple[LocalBroker, Cluster], tmp_path: Path
) -> None:
    broker, kafka = cluster
    started = time.monotonic()
    topics, launcher = await deployment(kafka, tmp_path, "cluster")
    layout = await partitions(kafka.admin, list(topics.names()))
    assert {len(p["replicas"]) for p in layout} == {NODES}, layout  # RF 3 on every partition
    assert await min_insync(kafka.admin, topics.commands) == "2"
    # The node leading most of the run's partitions: its loss moves the most leaders.
    victim = Counter(p["leader"] for p in layout).most_common(1)[0][0]
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
    # The killed node caught up: the run's and the internal topics are fully replicated again.
    names = [*topics.names(), *INTERNAL]
    await until(lambda: in_sync(kafka.admin, names), f"{names} in sync on {NODES} nodes", PHASE_S)

    logs = f"(service logs in {tmp_path}, broker logs in {broker.run_dir})"
    print(
        f"\ncluster: node {victim} of {NODES} killed after {seen[1][0]} rounds (next round ended "
        f"{seen[1][1]:.1f}s later), started again after {seen[2][0]} (next {seen[2][1]:.1f}s); "
        f"{tally.rounds} rounds in all {dict(tally.outcomes)}; "
        f"{report.records} records audited; {time.monotonic() - started:.0f}s"
    )
    assert_clean(alive, tally, report, logs)


async def test_a_rolling_restart_of_the_cluster_under_load_loses_and_doubles_nothing(
    cluster: tuple[LocalBroker, Cluster], tmp_path: Path
) -> None:
    """Issue 21 item 4: each node in turn stopped in order (controlled shutdown), rounds played on
    the two left, started again and waited for until every partition is back in sync (with min
    ISR 2 the next node may go only then), rounds played on three; audited at the end."""
    broker, kafka = cluster
    started = time.monotonic()
    topics, launcher = await deployment(kafka, tmp_path, "rolling")
    names = [*topics.names(), *INTERNAL]
    plan = Plan(rounds=100_000, players=6, step_s=STEP_S)
    tally = Tally()
    seen: dict[int, dict[str, float]] = {}
    async with launcher, Operator(kafka.operator, topics, PARTITIONS) as client:
        await fund(client, plan)
        stop = asyncio.Event()
        load = asyncio.create_task(play(client, plan, strategy_for("basic"), stop, tally))
        try:
            await more_rounds(tally, "on the whole cluster")
            for node in range(1, NODES + 1):
                await asyncio.to_thread(broker.stop_node, node)
                _, stalled = await more_rounds(tally, f"with node {node} stopped")
                await asyncio.to_thread(broker.start_node, node)
                back = time.monotonic()
                await until(lambda: in_sync(kafka.admin, names), f"node {node} in sync", PHASE_S)
                in_sync_s = time.monotonic() - back
                _, after = await more_rounds(tally, f"after node {node} came back")
                seen[node] = {"stalled_s": stalled, "in_sync_s": in_sync_s, "after_s": after}
        finally:
            stop.set()
        await asyncio.wait_for(load, DRAIN_S)
        alive = {name: s.alive for name, s in launcher.services.items()}
        report = await audit_run(kafka.admin, topics)

    logs = f"(service logs in {tmp_path}, broker logs in {broker.run_dir})"
    figures = {n: {k: round(v, 1) for k, v in f.items()} for n, f in seen.items()}
    print(
        f"\nrolling restart of {NODES} nodes: {figures} (seconds: until the first round ended "
        f"with the node stopped, until it was in sync again, until the next round ended); "
        f"{tally.rounds} rounds in all {dict(tally.outcomes)}; {report.records} records "
        f"audited; {time.monotonic() - started:.0f}s"
    )
    assert_clean(alive, tally, report, logs)
