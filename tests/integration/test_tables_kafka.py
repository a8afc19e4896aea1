"""Tables as data on a real broker: a table change applies to new rounds only, and a restarted
wallet rebuilds the table book and the bets Rebet repeats from the log (ADR 018)."""

from __future__ import annotations

import asyncio

import pytest
from support.kafka import Cluster
from support.kafka_io import produce, read_all, wait_for
from support.tables import TERMS, terms
from support.wallet import voided

from holdem.client.commands import partition_for
from holdem.client.operator import Operator, TableRefused
from holdem.client.player import Player
from holdem.core.contracts import BetPlaced, Reason, dump, parse
from holdem.core.wire.topics import Topics
from holdem.harness.audit import read_run
from holdem.harness.audit_tables import table_violations
from holdem.runtime.app import running
from holdem.wallet.app import create_app
from holdem.wallet.settings import WalletSettings

pytestmark = pytest.mark.kafka


async def test_a_changed_table_applies_to_new_rounds_only_across_a_wallet_restart(
    kafka: Cluster, topics: Topics
) -> None:
    prefix = topics.commands.removesuffix(".holdem.commands")
    settings = WalletSettings(**kafka.settings("wallet"), topic_prefix=prefix, metrics_port=0)  # type: ignore[arg-type]

    async def refunded(round_id: str) -> bool:
        records = await read_all(kafka.operator, topics.wallet)
        kinds = [(m.type, m.round_id) for m in (parse("wallet", r.value) for r in records)]
        return ("wallet.stakes_refunded", round_id) in kinds

    async with (
        Operator(kafka.admin, topics) as admin,
        Operator(kafka.operator, topics) as operator,
    ):
        alice = Player(operator, "alice", table_id="t1")
        async with running(create_app(settings)):
            opened = await admin.create_table("t1", TERMS)
            await alice.deposit(100_000)
            first = await alice.bet(2_500, 500)
            first.close()
            # stands in for the dealer's void, so the seat is free again
            await produce(
                kafka.admin, topics.rounds, "alice", dump(voided(first.round_id, "alice"))
            )
            await wait_for(lambda: refunded(first.round_id), timeout=60.0)
            changed = await admin.change_table(
                "t1", 1, terms(ante_max=1_000, decision_timeout_s=45)
            )

        async with running(create_app(settings)):  # a new wallet: book and bets from the log
            with pytest.raises(TableRefused) as stale:
                await admin.change_table("t1", 1, terms(ante_max=5_000))
            second = await alice.rebet()
            second.close()

    assert (opened.table_version, changed.table_version) == (1, 2)
    assert stale.value.reason is Reason.STALE_VERSION
    placed = [
        m
        for m in (parse("rounds", r.value) for r in await read_all(kafka.operator, topics.rounds))
        if isinstance(m, BetPlaced)
    ]
    assert [(b.round_id, b.table_version, b.decision_timeout_s, b.ante) for b in placed] == [
        (first.round_id, 1, 20, 2_500),  # as it was bet: the change did not reach it
        (second.round_id, 2, 45, 1_000),  # the rebet asked 2 500 again; version 2 allows 1 000
    ]
    assert (placed[1].requested_ante, placed[1].aa_bonus, placed[1].adjusted) == (2_500, 500, True)
    assert table_violations(await read_run(kafka.admin, topics)) == []


async def test_every_wallet_instance_follows_the_table_book_whoever_decided_the_change(
    kafka: Cluster, topics: Topics
) -> None:
    """Two wallet instances split the partitions: one decides the table's change (its
    partition), the other learns of it by following the tables topic (BookTail), and both
    decide rebets at the new version."""
    prefix = topics.commands.removesuffix(".holdem.commands")
    base = {**kafka.settings("wallet"), "topic_prefix": prefix, "metrics_port": 0}
    one, two = (create_app(WalletSettings(**base, instance_id=i)) for i in ("w1", "w2"))  # type: ignore[arg-type]
    # one player per partition: whichever instance owns it decides the player's bets
    count = one.processor.partitions
    assert count is not None and count > 1
    players = {partition_for(f"p{i}", count): f"p{i}" for i in range(40)}
    assert len(players) == count

    async def split() -> bool:  # both assigned, each partition rebuilt by one of them
        owned = [set(service.processor.states) for service in (one, two)]
        return all(owned) and owned[0].isdisjoint(owned[1]) and set.union(*owned) == set(players)

    async with (
        Operator(kafka.admin, topics) as admin,
        Operator(kafka.operator, topics) as operator,
        running(one),
    ):
        await admin.create_table("t1", TERMS)
        seats = [Player(operator, p, table_id="t1") for p in players.values()]
        first = []
        for seat in seats:
            await seat.deposit(100_000)
            placed = await seat.bet(5_000)
            placed.close()
            first.append(placed)
            void = voided(placed.round_id, seat.player_id)
            await produce(kafka.admin, topics.rounds, seat.player_id, dump(void))
        async with running(two):
            await wait_for(split, timeout=90.0)
            await admin.change_table("t1", 1, terms(ante_max=2_500))
            await asyncio.sleep(1.0)  # the other instance's reader is ms behind: leave it 1 s
            second = []
            for seat in seats:
                again = await seat.rebet()
                again.close()
                second.append(again)
            deciders = {
                name
                for name, service in (("w1", one), ("w2", two))
                for state in service.processor.states.values()
                for placed in second
                if placed.round_id in state.rounds
            }

    assert deciders == {"w1", "w2"}
    assert [(r.placed.table_version, r.placed.ante) for r in first] == [(1, 5_000)] * len(seats)
    assert [(r.placed.table_version, r.placed.ante) for r in second] == [(2, 2_500)] * len(seats)
