"""Issue 26, item 1 and the twin watch (ADR 034), on the in-memory transport.

A restarted broker listed the members that died during its outage, as Stable, for minutes: the
start-up check took a listed member with this instance's id for a live twin and refused every
restart, for ever. No start waits on the listing now; a twin is reported by the watch
(``holdem_duplicate_instance``), and Kafka's fencing keeps two processes of one id safe."""

from __future__ import annotations

import asyncio

import pytest
from prometheus_client import CollectorRegistry
from support.wallet import balances, deposit

from holdem.core.contracts import dump
from holdem.runtime.app import ServiceApp
from holdem.runtime.memory import MemoryTransport
from holdem.runtime.outbox import FatalError
from holdem.runtime.transport import GroupSettings, Listed, TopicPartition
from holdem.runtime.twins import TwinWatch
from holdem.wallet.app import create_app
from holdem.wallet.settings import WalletSettings

GROUP, CLIENT = "holdem-wallet", "holdem-wallet-0"
SESSION_S = 6.0
START_WITHIN_S = 60.0  # generous: the in-memory start takes well under a second


def wallet(transport: MemoryTransport, registry: CollectorRegistry | None = None) -> ServiceApp:
    return create_app(
        WalletSettings(metrics_port=0, instance_id="0"),
        transport=transport,
        registry=registry if registry is not None else CollectorRegistry(),
    )


async def test_a_group_listing_a_dead_member_for_ever_does_not_keep_its_restart_from_serving() -> (
    None
):
    transport = MemoryTransport()
    # The predecessor died during the outage; the group lists it for ever, never expiring it.
    transport.ghost(GROUP, "holdem-wallet-0-dead", CLIENT)
    registry = CollectorRegistry()
    service = wallet(transport, registry)
    await asyncio.wait_for(service.start(), START_WITHIN_S)
    try:
        await transport.settle()
        assert service.loop.healthy()
        await transport.publish(
            service.processor.topic_of("commands"), dump(deposit(10_000)), key=b"p1"
        )
        await transport.settle()
        assert balances(service.processor.state_for("p1")) == (10_000, 0)
        gauge = registry.get_sample_value("holdem_duplicate_instance", {"service": "wallet"})
        assert gauge == 0.0
    finally:
        await service.stop()


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


class Listing:
    """A group listing a test sets; None: the broker cannot describe the group."""

    def __init__(self) -> None:
        self.listed: list[Listed] | None = []
        self.closed = False

    async def members(self, group_id: str) -> list[Listed] | None:
        assert group_id == GROUP
        return self.listed

    async def close(self) -> None:
        self.closed = True


def watch(listing: Listing, clock: Clock, reports: list[bool]) -> TwinWatch:
    return TwinWatch(listing, GROUP, CLIENT, lambda: "me", reports.append, SESSION_S, clock)


ME = Listed("me", CLIENT)


async def test_the_same_other_member_listed_a_session_timeout_apart_is_a_twin_until_it_goes() -> (
    None
):
    listing, clock, reports = Listing(), Clock(), []  # type: list[bool]
    twins = watch(listing, clock, reports)
    listing.listed = [ME, Listed("other", CLIENT), Listed("peer", "holdem-wallet-1")]
    assert not await twins.check()  # listed once: it may be a predecessor on its way out
    clock.now += SESSION_S - 0.5
    assert not await twins.check()
    clock.now += 1.0
    assert await twins.check()
    listing.listed = None  # a failed describe changes nothing
    clock.now += 20
    assert await twins.check()
    listing.listed = [ME, Listed("peer", "holdem-wallet-1")]
    assert not await twins.check()
    assert reports == [False, False, True, False]
    await twins.close()
    assert listing.closed


async def test_predecessors_each_listed_once_and_listings_without_this_member_are_no_twin() -> None:
    listing, clock, reports = Listing(), Clock(), []  # type: list[bool]
    twins = watch(listing, clock, reports)
    for restart in range(5):  # a new member id each time: restarts, not a twin
        listing.listed = [ME, Listed(f"dead-{restart}", CLIENT)]
        assert not await twins.check()
        clock.now += 20
    # A restarted broker's stale listing, without this member: proves nothing either way.
    listing.listed = [Listed("stale", CLIENT)]
    for _ in range(5):
        assert not await twins.check()
        clock.now += 20
    assert reports == [False] * 5


async def test_a_live_twin_in_the_group_is_reported_and_the_older_producer_is_fenced_loudly() -> (
    None
):
    transport = MemoryTransport()
    await transport.ensure_topics(["t"], 3)
    settings = GroupSettings(GROUP, CLIENT, 500, 6_000, 1_000, 300_000)  # one id, twice
    first, second = transport.consumer(settings), transport.consumer(settings)
    for consumer in (first, second):
        consumer.subscribe(["t"], Quiet())
        await consumer.start()
    older, newer = transport.producer(CLIENT, 0), transport.producer(CLIENT, 0)
    await older.start()
    await newer.start()  # init_transactions: a newer epoch of the id
    clock, reports = Clock(), []  # type: Clock, list[bool]
    twins = TwinWatch(
        transport.admin(),
        GROUP,
        CLIENT,
        lambda: first.membership().member_id,
        reports.append,
        SESSION_S,
        clock,
    )
    assert not await twins.check()
    clock.now += 20
    assert await twins.check()
    # The older producer's next transaction is refused with the line an operator reads (a
    # service exits 70 on it: holdem.runtime.app).
    with pytest.raises(FatalError) as fenced:
        await older.transact([], [], {}, None, None)
    message = str(fenced.value)
    assert CLIENT in message and "HOLDEM_INSTANCE_ID" in message
    assert "presumed dead during an outage" in message
    await newer.transact([], [], {}, None, None)
    await second.stop()
    clock.now += 20
    assert not await twins.check()
    await first.stop()
    assert reports == [False, True, False]


class Quiet:
    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        return None

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        return None
