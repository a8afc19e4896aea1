"""A restarted service loads each partition's latest snapshot and replays only the log's tail."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator

import pytest
from support.kafka import Cluster
from support.kafka_io import read_all, wait_for
from support.messages import command
from support.stack import Stack

from holdem.core.contracts import Call, Deposit, PlaceBet
from holdem.core.wire.topics import Topics, snapshot_topic
from holdem.runtime.kafka import transactional_outbox
from holdem.runtime.snapshots import CHUNK_BYTES, Snapshot, latest
from holdem.runtime.topic_setup import ensure_topics

pytestmark = pytest.mark.kafka
SERVICES = ("wallet", "dealer", "settlement")


@pytest.fixture
async def stack(kafka: Cluster) -> AsyncIterator[Stack]:
    running = Stack(kafka, Topics.unique("snap"), snapshot_interval_s=0.2)
    await running.open()
    try:
        yield running
    finally:
        await running.close()


async def play(stack: Stack, player: str) -> None:
    round_id = f"{player}-{uuid.uuid4().hex[:6]}"
    await stack.send(command(PlaceBet, player, round_id=round_id, currency="EUR", ante=10))
    await stack.event(player, "round.dealt", round_id)
    await stack.send(command(Call, player, round_id=round_id))
    await stack.event(player, "wallet.payout_credited", round_id)


def replayed(stack: Stack, service: str) -> float:
    counter = stack.services[service].processor.metrics.replay_events.labels(service)
    return float(counter._value.get())


async def test_restarted_services_load_their_snapshots_and_replay_only_the_tail(
    stack: Stack, kafka: Cluster
) -> None:
    players = [f"s-{uuid.uuid4().hex[:8]}" for _ in range(6)]
    for player in players:
        await stack.send(command(Deposit, player, currency="EUR", amount=10_000))
        await stack.event(player, "wallet.deposited")
    for _ in range(4):
        for player in players:
            await play(stack, player)

    async def every_partition_snapshotted() -> bool:
        for service in SERVICES:
            topic = snapshot_topic(stack.topics, service)
            found = await latest(kafka.admin, topic, list(range(stack.partitions)))
            if len(found) < stack.partitions:
                return False
            for partition, raw in found.items():
                Snapshot.from_bytes(raw, service, partition)  # ours, for that partition
        return True

    await wait_for(every_partition_snapshotted, timeout=30)
    logged = {
        role: len(await read_all(kafka.admin, getattr(stack.topics, role)))
        for role in ("rounds", "wallet", "vault")
    }
    before = stack.balances(*players)

    for service in SERVICES:
        await stack.restart(service)
    print(f"replayed after restart: { {s: replayed(stack, s) for s in SERVICES} }, log: {logged}")
    # Each restarted service read its snapshots and only what was written after them.
    assert replayed(stack, "wallet") < logged["wallet"] + logged["rounds"]
    assert replayed(stack, "dealer") < logged["rounds"] + logged["vault"]
    assert replayed(stack, "settlement") < logged["rounds"]
    assert stack.balances(*players) == before

    for player in players:  # and they go on deciding correctly from the loaded state
        await play(stack, player)
    await stack.assert_sound(*players)


@pytest.mark.parametrize("compressed", [False, True], ids=["format-1", "format-3"])
async def test_a_snapshot_bigger_than_a_request_is_written_in_parts_and_read_back_whole(
    kafka: Cluster, compressed: bool
) -> None:
    """A partition of many players outgrows one record (a producer request is 1 MB at most):
    its parts commit in one transaction and the latest snapshot is joined from them, whole; in
    either format (ADR 048: a random state, which zlib does not shrink below two parts)."""
    topics = Topics.unique("parts")
    topic = snapshot_topic(topics, "wallet")
    await ensure_topics(kafka.admin, [topic], partitions=2, wait=60)
    outbox = transactional_outbox(kafka.admin, f"parts-{uuid.uuid4().hex[:8]}", retries=2)
    await outbox.start()
    state = random.Random(7).randbytes(3 * CHUNK_BYTES)  # about 1.5 MB of state
    written = {}
    try:
        # A big one, then a smaller big one (fewer parts: the first's last parts stay behind),
        # and a small one on the other partition.
        for partition, size in ((0, len(state)), (0, 2 * CHUNK_BYTES), (1, 100)):
            snapshot = Snapshot("wallet", partition, {"x": size}, state[:size].hex().encode())
            outbox.add_snapshots(
                [(topic, partition, key, value) for key, value in snapshot.to_records(compressed)]
            )
            await outbox.commit({}, None)
            written[partition] = snapshot
    finally:
        await outbox.stop()
    found = await latest(kafka.admin, topic, [0, 1])
    assert {p: Snapshot.from_bytes(raw, "wallet", p) for p, raw in found.items()} == written


async def test_no_partitions_no_snapshot_and_no_hang(kafka: Cluster) -> None:
    """An instance assigned nothing (more instances than partitions) is ready at once: reading
    the snapshots of no partition hung in aiokafka's consumer stop, and the short chaos run
    saw such an instance never get ready."""
    topics = Topics.unique("none")
    topic = snapshot_topic(topics, "wallet")
    await ensure_topics(kafka.admin, [topic], partitions=2, wait=60)
    assert await asyncio.wait_for(latest(kafka.admin, topic, []), timeout=30) == {}
