"""The shared runtime on a real broker: transactional publish, replay on start, exactly once."""

from __future__ import annotations

import asyncio

import pytest
from support.kafka import Cluster
from support.kafka_io import produce, read_all, wait_for
from support.messages import command
from support.toy import TOY

from holdem.core.contracts import Call, Malfunction, dump, parse
from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics
from holdem.runtime.app import build_app, running
from holdem.runtime.settings import RuntimeSettings

pytestmark = pytest.mark.kafka


def settings_for(kafka: Cluster, topics: Topics) -> RuntimeSettings:
    prefix = topics.commands.removesuffix(".holdem.commands")
    # The toy is no principal of the game: it runs as admin (its names have no ACLs).
    return RuntimeSettings(**kafka.settings("admin"), topic_prefix=prefix, partitions=3)  # type: ignore[arg-type]


async def test_a_restarted_service_rebuilds_its_state_and_does_not_act_twice(
    kafka: Cluster, operator: KafkaConnection, topics: Topics
) -> None:
    settings = settings_for(kafka, topics)
    first = command(Call, round_id="r1")

    async def malfunctions() -> list[Malfunction]:
        records = await read_all(operator, topics.rounds)
        return [parse("rounds", r.value) for r in records]

    async with running(build_app(TOY, settings)):
        await produce(operator, topics.commands, "p1", dump(first))

        async def one() -> bool:
            return len(await malfunctions()) == 1

        await wait_for(one, timeout=30.0)

    restarted = build_app(TOY, settings)
    async with running(restarted):
        # the same command again (an operator retry), then a new one
        await produce(operator, topics.commands, "p1", dump(first))
        await produce(operator, topics.commands, "p1", dump(command(Call, round_id="r2")))

        async def two() -> bool:
            return len(await malfunctions()) >= 2

        await wait_for(two, timeout=30.0)
        await asyncio.sleep(1.0)  # give a wrong duplicate time to show up
        assert restarted.processor.state_for("p1") == {"r1", "r2"}
    assert sorted(m.round_id for m in await malfunctions()) == ["r1", "r2"]
