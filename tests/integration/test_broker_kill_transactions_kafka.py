"""Issue 26, the broker's hanging commit (ADR 042): a broker killed -9 and started again on its
data at once, while transactional producers commit continuously, must never leave a partition
blocked behind a transaction the coordinator believes complete.

Before ADR 042 the test broker was one combined KRaft node: its restarted controller kept the old
process's registration unfenced for broker.session.timeout.ms; the restarted broker loaded its
transaction coordinators from that stale image and queued COMMIT markers for its own listener
(not open yet); when the controller fenced the stale registration, every partition lost its
leader and the coordinator dropped the queued markers ("Couldn't find leader endpoint ... likely
deleted ... can be skipped") and wrote the transaction complete: the partition's last stable
offset (LSO) then never moved again.

Each round here: producers committing across every partition, kill -9 mid-commit, the producers
gone with it (a service's rebuild writes nothing until its partitions are stable, and a later
commit of the same producer id would close the open transaction and hide the loss), the broker
started again at once (the quickest restart is the worst case); then every partition's LSO must
reach its high watermark: whatever was open is aborted at its 10 s timeout, whatever was being
committed gets its markers. A dropped marker leaves LSO < high watermark for good, unless the
coordinator happens to load the transaction again and resend; so the broker's log must also not
hold Kafka's line for the drop itself (no topic is deleted here)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError
from support.own_broker import kept_broker

from holdem.core.wire.connection import KafkaConnection
from holdem.ops.broker import LocalBroker

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(900)]

PARTITIONS = 4
PRODUCERS = 3
# Three in make test (on the old layout every run failed at its first kill, 2 of 2); more for a
# hunt: HOLDEM_TXN_KILLS=25.
KILLS = int(os.environ.get("HOLDEM_TXN_KILLS", "3"))
ADVANCE_WITHIN_S = 120.0  # an open transaction is aborted within its 10 s timeout; a hang never
# Kafka's line when it drops the markers of a partition without a leader as if deleted.
SKIPPED = "these partitions are likely deleted already and hence can be skipped"
COMMITS_BEFORE_KILL = 20  # commits since the restart before the next kill: the load is on


@pytest.fixture(scope="module")
async def broker(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LocalBroker]:
    async with kept_broker(tmp_path_factory.mktemp("txn-kill")) as own:
        yield own


class Committer:
    """Transactional producers, each committing one record to every partition per transaction,
    as fast as they can; a failed one (the broker gone) is closed and made again, as a service
    restarts (its init_transactions fences and ends whatever it left open)."""

    def __init__(self, connection: KafkaConnection, topic: str) -> None:
        self.connection = connection
        self.topic = topic
        self.commits = 0
        self.errors = 0

    async def run(self, name: str) -> None:
        while True:
            producer = AIOKafkaProducer(
                **self.connection.kwargs(),
                transactional_id=name,
                transaction_timeout_ms=10_000,
                request_timeout_ms=10_000,
            )
            try:
                await producer.start()
                while True:
                    async with producer.transaction():
                        for partition in range(PARTITIONS):
                            await producer.send(self.topic, b"x", partition=partition)
                    self.commits += 1
            except KafkaError:
                self.errors += 1
            finally:
                with contextlib.suppress(KafkaError):
                    async with asyncio.timeout(15):
                        await producer.stop()
            await asyncio.sleep(0.2)


async def offsets(connection: KafkaConnection, topic: str) -> tuple[list[int], list[int]]:
    """Every partition's LSO (a read_committed consumer's end) and high watermark."""
    partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    ends: list[list[int]] = []
    for isolation in ("read_committed", "read_uncommitted"):
        consumer = AIOKafkaConsumer(**connection.kwargs(), isolation_level=isolation)
        await consumer.start()
        try:
            found = await consumer.end_offsets(partitions)
        finally:
            await consumer.stop()
        ends.append([found[tp] for tp in partitions])
    return ends[0], ends[1]


async def until_commits(committer: Committer, count: int, timeout: float) -> None:
    target = committer.commits + count
    async with asyncio.timeout(timeout):
        while committer.commits < target:
            await asyncio.sleep(0.1)


async def test_a_broker_killed_mid_commit_and_started_at_once_leaves_no_partition_blocked(
    broker: LocalBroker, tmp_path: Path
) -> None:
    admin = broker.connection("admin")
    topic = f"txn-kill-{uuid.uuid4().hex[:8]}"
    client = AIOKafkaAdminClient(**admin.kwargs())
    await client.start()
    try:
        await client.create_topics([NewTopic(topic, PARTITIONS, 1)])
    finally:
        await client.close()
    figures: list[str] = []
    commits = errors = 0
    try:
        for kill in range(1, KILLS + 1):
            committer = Committer(admin, topic)  # new ids: no later commit closes an old one
            tasks = [
                asyncio.create_task(committer.run(f"{topic}-{kill}-{n}")) for n in range(PRODUCERS)
            ]
            try:
                await until_commits(committer, COMMITS_BEFORE_KILL, ADVANCE_WITHIN_S)
                await asyncio.to_thread(broker.kill)
                killed = time.monotonic()
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                commits += committer.commits
                errors += committer.errors
            await asyncio.to_thread(broker.up)
            answered = time.monotonic()
            deadline = answered + ADVANCE_WITHIN_S
            stable: list[int] = []
            high: list[int] = [0]
            while stable != high:
                assert time.monotonic() < deadline, (
                    f"kill {kill}: {topic} blocked, LSO {stable} < high watermark {high} "
                    f"{ADVANCE_WITHIN_S:.0f}s after the broker answered (broker log "
                    f"{broker.run_dir}/server.log)"
                )
                with contextlib.suppress(KafkaError):  # not serving yet
                    stable, high = await offsets(admin, topic)
                await asyncio.sleep(0.5)
            # The loss itself, whether or not a later reload happened to send the markers again
            # (it often does: the hang is the case where it does not): no topic is deleted here.
            log = (broker.run_dir / "server.log").read_text(errors="replace")
            skipped = [line for line in log.splitlines() if SKIPPED in line]
            assert not skipped, f"kill {kill}: the coordinator skipped markers: {skipped[0]}"
            figures.append(
                f"kill {kill}: up in {answered - killed:.1f}s, every LSO at its high watermark "
                f"{time.monotonic() - answered:.1f}s after ({high})"
            )
    finally:
        print("\n" + "\n".join(figures))
        print(f"{commits} commits, {errors} producer errors")
