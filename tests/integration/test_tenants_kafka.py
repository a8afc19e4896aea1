"""Two operators on one cluster: each plays through its own services, neither reaches the other."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace

import pytest
from aiokafka.errors import (
    GroupAuthorizationFailedError,
    KafkaConnectionError,
    TopicAuthorizationFailedError,
)
from support.kafka import Cluster
from support.kafka_io import consumer, produce, read_all, wait_for
from support.stack import Stack

from holdem.client import Operator, Player, command, partition_for
from holdem.core.contracts import Call, PlaceBet, RecordReason
from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.headers import Stamp
from holdem.core.wire.topics import Topics, snapshot_topic
from holdem.harness.audit import audit_run, operator_violations, read_run
from holdem.ops import acl, tenants
from holdem.runtime.snapshots import Snapshot, latest

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(240)]


@dataclass
class Tenant:
    name: str
    operator: KafkaConnection
    stack: Stack

    @property
    def topics(self) -> Topics:
        return self.stack.topics


@pytest.fixture(scope="module")
async def pair(kafka: Cluster) -> AsyncIterator[tuple[Tenant, Tenant]]:
    """Tenants ``a-<hex>`` and ``b-<hex>``, each with its operator principal and its services."""
    suffix = secrets.token_hex(3)
    made: list[Tenant] = []
    try:
        for name in (f"a-{suffix}", f"b-{suffix}"):
            operator = await tenants.add_tenant(kafka.admin, name)
            stack = Stack(kafka, Topics().with_prefix(name), operator=operator)
            made.append(Tenant(name, operator, stack))
            await stack.open()
        yield made[0], made[1]
    finally:
        for tenant in made:
            await tenant.stack.close()


async def play_one_round(tenant: Tenant, player: str, brand: str | None = None) -> int:
    partitions = tenant.stack.partitions
    async with Operator(tenant.operator, tenant.topics, partitions, brand=brand) as client:
        who = Player(client, player, currency="EUR")
        await who.deposit(5_000)
        played = await who.bet(ante=100)
        await played.dealt()
        await played.fold()
        outcome = await played.outcome()
        assert outcome.settled is not None, outcome.end
        assert outcome.balance is not None
        return outcome.balance


async def test_each_tenant_plays_through_its_own_services(pair: tuple[Tenant, Tenant]) -> None:
    for tenant in pair:
        assert await play_one_round(tenant, "alice") == 5_000 - 100  # a fold loses the ante
    # The same player id at two operators is two players: one round each, nothing shared.
    for tenant in pair:
        rounds = [e for e in tenant.stack.events("alice") if e.type == "round.settled"]
        assert len(rounds) == 1, tenant.name


@pytest.mark.parametrize("role", ["commands", "rounds", "wallet", "rejected", "vault"])
async def test_an_operator_cannot_write_another_tenants_topics(
    pair: tuple[Tenant, Tenant], role: str
) -> None:
    mine, theirs = pair
    with pytest.raises(TopicAuthorizationFailedError):
        await produce(mine.operator, getattr(theirs.topics, role), "alice", b"{}")


@pytest.mark.parametrize("role", ["commands", "rounds", "wallet", "rejected"])
async def test_an_operator_cannot_read_another_tenants_topics(
    pair: tuple[Tenant, Tenant], role: str
) -> None:
    mine, theirs = pair
    with pytest.raises(TopicAuthorizationFailedError):
        await read_all(mine.operator, getattr(theirs.topics, role))


async def test_an_operator_reads_its_own_events(pair: tuple[Tenant, Tenant]) -> None:
    mine, _ = pair
    await play_one_round(mine, "bob")
    keys = {r.key for r in await read_all(mine.operator, mine.topics.rounds)}
    assert b"bob" in keys


async def test_an_operator_cannot_join_another_tenants_groups(pair: tuple[Tenant, Tenant]) -> None:
    mine, theirs = pair
    with pytest.raises(GroupAuthorizationFailedError):
        group = f"{theirs.name}.holdem-operator-x"
        async with consumer(mine.operator, mine.topics.rounds, group_id=group) as reader:
            await reader.getone()


async def test_the_shared_operator_principal_has_no_right_on_a_tenant(
    kafka: Cluster, pair: tuple[Tenant, Tenant]
) -> None:
    mine, _ = pair
    with pytest.raises(TopicAuthorizationFailedError):
        await produce(kafka.operator, mine.topics.commands, "alice", b"{}")


async def test_a_tenants_operator_needs_its_password(pair: tuple[Tenant, Tenant]) -> None:
    mine, theirs = pair
    with pytest.raises(KafkaConnectionError):
        await produce(replace(mine.operator, password=theirs.operator.password), "x", "k", b"")


def test_a_tenant_plan_is_the_game_plan_with_its_own_operator() -> None:
    rules = tenants.plan("acme")
    own = [r for r in rules if r.principal == "User:operator-acme"]
    shared = [r for r in acl.plan("acme") if r.principal == "User:operator"]
    assert [replace(r, principal="User:operator-acme") for r in shared] == own
    assert all(r.name.startswith("acme.") for r in rules)
    assert not any(r.principal == "User:operator" for r in rules)


async def test_every_record_of_a_tenants_round_names_its_operator_and_the_bets_brand(
    kafka: Cluster, pair: tuple[Tenant, Tenant]
) -> None:
    """ADR 021 on a real broker: each tenant's services stamp their own operator on every record
    of every topic, and every record of a branded player's rounds and money carries the brand."""
    for tenant in pair:
        await play_one_round(tenant, "carol", brand=f"{tenant.name}-web")
    for tenant in pair:
        records = await read_run(kafka.admin, tenant.topics)
        written = [r for r in records if r.role not in ("commands", "queries", "admin")]
        assert len(written) >= 8, tenant.name  # deposited, bet, stake, call held, dealt, ...
        assert operator_violations(records, tenant.name) == []
        carols = [r for r in written if r.message is not None and r.message.player_id == "carol"]
        assert {r.role for r in carols} >= {"rounds", "wallet", "vault"}
        assert {Stamp.of(r.headers) for r in carols} == {Stamp(tenant.name, f"{tenant.name}-web")}
        report = await audit_run(kafka.admin, tenant.topics)  # the operator check included
        assert report.ok, report.violations
        assert report.rounds >= 1


async def test_a_command_naming_another_operator_is_refused_and_never_decided(
    pair: tuple[Tenant, Tenant],
) -> None:
    mine, theirs = pair
    stack = mine.stack
    partitions = stack.partitions
    async with Operator(mine.operator, mine.topics, partitions) as client:
        dave = Player(client, "dave", currency="EUR")
        await dave.deposit(1_000)
    # A client of this tenant's principal that names the other operator in its header.
    async with Operator(
        mine.operator, mine.topics, partitions, operator_id=theirs.name
    ) as confused:
        await confused.send(
            command(PlaceBet, "dave", round_id="r-foreign", currency="EUR", ante=100)
        )

    def refused() -> list[object]:
        return [
            r.message
            for r in stack.records("dave")
            if r.role == "rejected" and r.message.reason == RecordReason.WRONG_OPERATOR
        ]

    [rejection] = await stack.wait_for(refused, "the wrong_operator refusal")
    assert theirs.name in rejection.detail  # type: ignore[attr-defined]
    # Decided never: the next bet of the same player, with the right header, plays normally.
    async with Operator(mine.operator, mine.topics, partitions) as client:
        played = await Player(client, "dave", currency="EUR").bet(ante=100)
        await played.dealt()
        await played.fold()
        outcome = await played.outcome()
        assert outcome.balance == 1_000 - 100
    assert not [e for e in stack.events("dave") if e.round_id == "r-foreign"]
    wallet = [e.type for e in stack.events("dave", "wallet")]
    assert wallet.count("wallet.stake_taken") == 1


async def test_a_restarted_dealer_keeps_the_brand_of_an_open_round(
    kafka: Cluster, pair: tuple[Tenant, Tenant]
) -> None:
    """The brand memory goes into the dealer's snapshots and comes back at a restart: the
    decision on a round bet before the restart carries the bet's brand, though the Call that
    asked for it names none."""
    mine, _ = pair
    stack, partitions = mine.stack, mine.stack.partitions
    async with Operator(mine.operator, mine.topics, partitions, brand="erin-brand") as client:
        erin = Player(client, "erin", currency="EUR")
        await erin.deposit(1_000)
        played = await erin.bet(ante=100)
        await played.dealt()
    partition = partition_for("erin", partitions)
    dealer = snapshot_topic(mine.topics, "dealer")

    async def snapshotted() -> bool:
        # A snapshot is written with a batch once due: give the dealer one (a refused Call).
        await stack.send(command(Call, "frank", round_id="no-such-round"))
        found = (await latest(kafka.admin, dealer, [partition])).get(partition)
        brands = Snapshot.from_bytes(found, "dealer", partition).brands if found else {}
        return brands.get(f"erin/{played.round_id}") == "erin-brand"

    await wait_for(snapshotted, timeout=30.0)
    await stack.restart("dealer")
    restarted = stack.services["dealer"].processor
    key = f"erin/{played.round_id}"
    await stack.wait_for(lambda: restarted.store.brands_of(partition).get(key), "the rebuilt brand")
    assert restarted.store.brands_of(partition)[key] == "erin-brand"
    async with Operator(mine.operator, mine.topics, partitions) as plain:  # no brand header
        await plain.send(command(Call, "erin", round_id=played.round_id))
        await stack.event("erin", "round.settled", played.round_id)
    erins = [
        r
        for r in stack.records("erin")
        if r.message.round_id == played.round_id and r.role in ("rounds", "wallet", "vault")
    ]
    assert {r.message.type for r in erins} >= {"round.called", "round.settled"}
    assert {Stamp.of(r.headers) for r in erins} == {Stamp(mine.name, "erin-brand")}
