"""A rolling upgrade under load, and its rollback (issue 21 item 2, ADR 032).

Two instances of every service run this release (N). Each instance in turn is stopped (SIGTERM:
its partitions move to its twin at once) and started again as the next release (N+1: this tree
with tests/fixtures/next_release.patch, in a virtualenv of its own, which writes RoundClosed v2,
the wallet's v7 snapshots and compressed snapshot records where N writes v1, v6 and format 1),
rounds ending between each step; then each is replaced by N again in the same way. Instances of
both releases share each group for most of the run. Nothing may be lost, doubled or stuck (the
audit, every round ended for its player), nothing dead-lettered; both versions of RoundClosed and
of the wallet's snapshots are on the log, and after the rollback N's wallets started from
snapshots N+1 wrote (no full replay)"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from support import next_release
from support.dealer import VAULT_KEYS
from support.kafka import Cluster
from support.kafka_io import read_all

from holdem.client import Operator
from holdem.core.wire.topics import Topics, snapshot_topic
from holdem.harness.audit import audit_run
from holdem.harness.demo_report import strategy_for
from holdem.harness.load import Plan, Tally, under_load
from holdem.ops.launcher import Launcher, ServiceProcess
from holdem.runtime.snapshots import PARTS_FORMAT, Snapshot
from holdem.runtime.topic_setup import ensure_topics

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(900)]

PARTITIONS = 3
INSTANCES = 2
ORDER = ("settlement", "dealer", "wallet", "query")  # any order works (ADR 032): the guide's
ROUNDS_PER_STEP = 4  # rounds that end after each instance is replaced, before the next
STEP_S = 90.0  # bound on every wait of the load for an answer
WAIT_S = 120.0  # bound on each replacement and each group of rounds
DRAIN_S = 150.0


@pytest.fixture(scope="module")
def next_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return next_release.build(tmp_path_factory.mktemp("release"))


async def until(found: Callable[[], Awaitable[bool]], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not await found():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {WAIT_S:.0f}s: {what}")
        await asyncio.sleep(0.5)


async def rounds_end(tally: Tally, what: str) -> None:
    start = tally.rounds

    async def enough() -> bool:
        return tally.rounds >= start + ROUNDS_PER_STEP

    await until(enough, f"{ROUNDS_PER_STEP} rounds {what} (from {start})")


async def replace(service: ServiceProcess, python: Path | str) -> float:
    """Stop the instance gracefully and start it as the release of ``python``; seconds from
    the signal until it is ready (member of its group, every partition it got rebuilt)."""
    began = time.monotonic()
    code = await service.stop()
    assert code == 0, f"{service.label} exited {code}:\n{service.log_tail()}"
    service.argv = [str(python), "-c", f"from holdem.{service.name}.app import main; main()"]
    service.start()
    await service.wait_ready(WAIT_S)
    return time.monotonic() - began


def versions(values: list[bytes], kind: str) -> Counter[int]:
    found: Counter[int] = Counter()
    for value in values:
        body = json.loads(value)
        if body.get("type") == kind:
            found[body["version"]] += 1
    return found


def snapshot_versions(values: list[bytes]) -> tuple[Counter[int], Counter[int]]:
    """The wallet body's version of every whole snapshot record (a state of this test's size
    fits in one record; parts are not counted), and the record's format (ADR 048)."""
    versions: Counter[int] = Counter()
    formats: Counter[int] = Counter()
    for value in values:
        head = json.loads(value.partition(b"\n")[0])  # format 3: a header line, then zlib
        if head["format"] == PARTS_FORMAT:
            continue
        snapshot = Snapshot.from_bytes(value, "wallet", head["partition"])
        versions[json.loads(snapshot.state)["version"]] += 1
        formats[head["format"]] += 1
    return versions, formats


async def test_a_rolling_upgrade_to_the_next_release_and_back_under_load(
    kafka: Cluster, tmp_path: Path, next_python: Path
) -> None:
    topics = Topics.unique("upgrade")
    prefix = topics.commands.removesuffix(".holdem.commands")
    await ensure_topics(kafka.admin, topics, partitions=PARTITIONS, wait=60)
    await kafka.authorize(prefix)
    env = {"HOLDEM_DEALER_VAULT_KEYS": VAULT_KEYS, "HOLDEM_SNAPSHOT_INTERVAL_S": "2"}
    launcher = Launcher(
        kafka.bootstrap,
        tmp_path,
        prefix,
        PARTITIONS,
        extra_env=env,
        credentials=kafka.principals,
        instances=INSTANCES,
    )
    plan = Plan(rounds=100_000, players=6, voids=2_000, step_s=STEP_S)
    tally = Tally()
    took: dict[str, list[float]] = {"N+1": [], "N": []}
    async with launcher, Operator(kafka.operator, topics, PARTITIONS) as client:
        async with under_load(client, plan, strategy_for("basic"), tally, DRAIN_S):
            await rounds_end(tally, "on N")
            for release, python in (("N+1", next_python), ("N", Path(sys.executable))):
                for name in ORDER:
                    for service in launcher.instances_of(name):
                        took[release].append(await replace(service, python))
                        await rounds_end(tally, f"after {service.label} became {release}")
        alive = {label: s.alive for label, s in launcher.services.items()}
        report = await audit_run(kafka.admin, topics)
        wallets = launcher.instances_of("wallet")
        replays = {w.label: w.replays() for w in wallets}
        logs = "".join(s.log_path.read_text(errors="replace") for s in launcher.services.values())

    rounds = [r.value for r in await read_all(kafka.admin, topics.rounds)]
    snapshots = [r.value for r in await read_all(kafka.admin, snapshot_topic(topics, "wallet"))]
    dead = await read_all(kafka.admin, topics.rejected)
    closed = versions(rounds, "round.closed")
    written, formats = snapshot_versions(snapshots)
    print(
        f"\nrolling upgrade: {tally.rounds} rounds {dict(tally.outcomes)}; round.closed by "
        f"version {dict(closed)}; wallet snapshots by version {dict(written)}; seconds from "
        f"SIGTERM to ready per instance: "
        + "; ".join(f"to {r} {[round(s, 1) for s in t]}" for r, t in took.items())
    )
    assert all(alive.values()), alive
    assert not tally.stalled, tally.stalled
    assert report.ok, "\n".join(report.violations[:30])
    assert report.rounds == report.ended == tally.rounds > 0
    assert not dead, [d.value[:300] for d in dead]
    assert closed[1] > 0 and closed[2] > 0, closed  # N wrote v1, N+1 wrote v2, both read
    assert written[6] > 0 and written[7] > 0, written
    assert formats[1] > 0 and formats[3] > 0, formats  # N writes format 1, N+1 format 3
    assert "snapshot unusable" not in logs
    # The first wallet rolled back started while only N+1 had written the wallet's snapshots
    # for a while (v7, every 2 s): its rebuild at that start loaded them, and no partition was
    # replayed from the log's start ("snapshot unusable" above).
    first = replays[launcher.instances_of("wallet")[0].label]
    assert first and first[0]["snapshots"], first
