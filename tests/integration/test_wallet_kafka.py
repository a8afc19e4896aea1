"""The wallet on a real broker: a restarted wallet rebuilds its ledger and never pays twice."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from support.kafka import Cluster
from support.kafka_io import produce, read_all, wait_for
from support.wallet import balances, deposit, place_bet, round_events, verified_settled

from holdem.core.contracts import Message, dump, parse
from holdem.core.wire.topics import Topics
from holdem.runtime.app import running
from holdem.wallet.app import create_app
from holdem.wallet.settings import WalletSettings

pytestmark = pytest.mark.kafka


def settings_for(kafka: Cluster, topics: Topics) -> WalletSettings:
    prefix = topics.commands.removesuffix(".holdem.commands")
    return WalletSettings(**kafka.settings("wallet"), topic_prefix=prefix, metrics_port=0)  # type: ignore[arg-type]


async def test_a_restarted_wallet_rebuilds_its_ledger_and_pays_a_resent_settlement_once(
    kafka: Cluster, topics: Topics
) -> None:
    settings = settings_for(kafka, topics)

    async def send(topic: str, message: Message) -> None:
        # Commands as the operator; round events as admin, standing in for dealer and settlement.
        who = kafka.operator if topic == topics.commands else kafka.admin
        await produce(who, topic, message.player_id, dump(message))

    async def ledger() -> list[str]:
        return [
            parse("wallet", r.value).type for r in await read_all(kafka.operator, topics.wallet)
        ]

    def has(count: int) -> Callable[[], Awaitable[bool]]:
        async def enough() -> bool:
            return len(await ledger()) >= count

        return enough

    async with running(create_app(settings)):
        # one at a time: across topics Kafka keeps no order, and a Called before its bet is
        # a round the wallet does not know (in the game, Dealt always comes in between)
        for topic, message, ledger_size in (
            (topics.commands, deposit(10_000), 1),
            (topics.commands, place_bet("r1", ante=1_000, aa_bonus=500), 3),
            (topics.rounds, round_events("r1").dealt(), 3),
            (topics.rounds, round_events("r1").called(), 4),
            (topics.rounds, verified_settled(), 5),
        ):
            await send(topic, message)
            await wait_for(has(ledger_size), timeout=60.0)

    restarted = create_app(settings)
    async with running(restarted):
        await send(topics.rounds, verified_settled())  # a redelivered settlement
        await send(topics.commands, deposit(1))
        await wait_for(has(6), timeout=60.0)
        await asyncio.sleep(1.0)  # give a wrong second payout time to show up
        assert balances(restarted.processor.state_for("p1")) == (14_501, 0)

    final: list[str] = []

    async def complete() -> bool:  # read_all has been seen to return [] right after a restart
        final[:] = await ledger()
        return len(final) >= 6

    await wait_for(complete, timeout=60.0)
    assert final.count("wallet.payout_credited") == 1
