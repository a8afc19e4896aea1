"""The in-memory transport under the service loop: transactions are whole, a newer producer
fences the older, a member of an old generation cannot commit, a hand-over between two
instances rebuilds the state, and a restart loads its snapshot and replays only the tail."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import CollectorRegistry
from support.memory import started
from support.wallet import balances, deposit, place_bet

from holdem.core.contracts import parse
from holdem.runtime.memory import MemoryTransport
from holdem.runtime.outbox import FatalError, TransactionalOutbox
from holdem.runtime.transport import GroupSettings, Member, Record, TopicPartition
from holdem.wallet.app import create_app
from holdem.wallet.settings import WalletSettings

GROUP = GroupSettings("g", "g-0", 500, 6_000, 1_000, 300_000)


class Listener:
    def __init__(self) -> None:
        self.calls: list[tuple[str, set[TopicPartition]]] = []

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        self.calls.append(("revoked", set(revoked)))

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self.calls.append(("assigned", set(assigned)))


async def test_a_transaction_commits_its_records_and_offsets_together_or_not_at_all() -> None:
    transport = MemoryTransport(partitions=1)
    await transport.publish("in", b"x", key=b"p1")
    consumer = transport.consumer(GROUP)
    consumer.subscribe(["in"], Listener())
    await consumer.start()
    member = Member(consumer.membership().generation or 0, consumer.membership().member_id or "")
    outbox = TransactionalOutbox(transport.producer("t", 0))
    await outbox.start()
    await outbox.send([Record("out", "p1", b"a", "k"), Record("out", "p1", b"b", "k")])
    assert transport.values("out") == []  # pending: nobody sees a batch before its commit

    await outbox.commit({TopicPartition("in", 0): 1}, "g", member)
    assert transport.values("out") == [b"a", b"b"]
    assert [r.headers for r in transport.records("out")] == [(("type", b"k"),)] * 2

    stale = Member(member.generation - 1, member.member_id)
    await outbox.send([Record("out", "p1", b"c", "k")])
    with pytest.raises(FatalError, match="no longer the group's member"):
        await outbox.commit({TopicPartition("in", 0): 1}, "g", stale)
    assert transport.values("out") == [b"a", b"b"]  # refused whole: nothing written

    newer = TransactionalOutbox(transport.producer("t", 0))
    await newer.start()  # the same transactional id: the first producer is fenced
    await outbox.send([Record("out", "p1", b"d", "k")])
    with pytest.raises(FatalError, match="producer fenced"):
        await outbox.flush()
    assert transport.values("out") == [b"a", b"b"]


async def test_a_member_joining_and_leaving_revokes_and_assigns_under_a_new_generation() -> None:
    transport = MemoryTransport(partitions=2)
    first, second = Listener(), Listener()
    a = transport.consumer(GROUP)
    a.subscribe(["in"], first)
    await a.start()
    b = transport.consumer(GroupSettings("g", "g-1", 500, 6_000, 1_000, 300_000))
    b.subscribe(["in"], second)
    await b.start()
    every = {TopicPartition("in", 0), TopicPartition("in", 1)}
    assert first.calls == [
        ("revoked", set()),  # as aiokafka, before its first assignment too
        ("assigned", every),
        ("revoked", every),
        ("assigned", every),
    ]
    assert second.calls == [("revoked", set()), ("assigned", set())]
    assert b.assignment() == set() and a.assignment() == every  # the oldest member gets all
    generation = a.membership().generation
    await a.stop()
    assert b.assignment() == every and b.membership().generation == (generation or 0) + 1
    listed = await transport.admin().members("g")
    assert listed is not None and [m.client_id for m in listed] == ["g-1"]


def wallet(transport: MemoryTransport, instance: str, **settings: object):  # type: ignore[no-untyped-def]
    return create_app(
        WalletSettings(metrics_port=0, instance_id=instance, **settings),  # type: ignore[arg-type]
        transport=transport,
        registry=CollectorRegistry(),
    )


async def test_a_second_instance_takes_over_with_the_state_rebuilt_from_the_log() -> None:
    transport = MemoryTransport()
    first, second = wallet(transport, "0"), wallet(transport, "1")
    commands = first.processor.topic_of("commands")
    await first.start()
    await transport.publish(commands, _raw(deposit(10_000)), key=b"p1")
    await transport.settle()
    await second.start()
    await transport.settle()
    assert second.processor.states == {}  # idle: the first instance owns every partition

    await first.stop()  # it leaves: the second is assigned everything and rebuilds
    await transport.publish(commands, _raw(place_bet("r1", ante=1_000, aa_bonus=500)), key=b"p1")
    await transport.settle()
    assert balances(second.processor.state_for("p1")) == (6_500, 2_000)
    await second.stop()
    kinds = [parse("wallet", raw).type for raw in transport.values("holdem.wallet")]
    assert kinds == ["wallet.deposited", "wallet.stake_taken", "wallet.call_held"]


async def test_a_restart_loads_the_latest_snapshot_and_replays_only_what_came_after() -> None:
    transport = MemoryTransport()
    before = wallet(transport, "0", snapshot_interval_s=0.001)
    async with started(before, transport) as log:
        # A snapshot is due at each batch after the first (the interval is long past): the
        # last one covers the earlier deposits' events (a batch's own output is not yet in the
        # log when its snapshot is taken, so it is read again at the restart, idempotently).
        for amount in (10_000, 5_000, 2_500):
            await log.publish("commands", _raw(deposit(amount)), b"p1")
            await asyncio.sleep(0.01)
        live = before.processor.state_for("p1")
    assert transport.values("holdem.wallet.snapshots")
    registry = CollectorRegistry()
    after = create_app(
        WalletSettings(metrics_port=0, snapshot_interval_s=30),
        transport=transport,
        registry=registry,
    )
    async with started(after, transport):
        assert after.processor.state_for("p1") == live
    sample = registry.get_sample_value
    assert sample("holdem_snapshot_failures_total", {"service": "wallet"}) in (None, 0.0)
    replayed = sample("holdem_replay_events_total", {"service": "wallet"})
    assert replayed is not None and replayed < len(transport.records("holdem.wallet"))


def _raw(message: object) -> bytes:
    from holdem.core.contracts import dump

    return dump(message)  # type: ignore[arg-type]
