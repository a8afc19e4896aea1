"""The projection on real Kafka and PostgreSQL: killed -9 under load and started again, it ends
with the audit's row counts and money totals to the minor unit, nothing missing or doubled."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
from support.backoffice import (
    ProjectionProcess,
    audit_figures,
    caught_up,
    database_figures,
    end_offsets,
)
from support.kafka import Cluster
from support.stack import Stack

from holdem.client import Operator
from holdem.core.strategy import STRATEGIES
from holdem.runtime.audit import check, read_run
from holdem.runtime.load import Plan, fund, play
from holdem.runtime.topics import Topics

pytestmark = pytest.mark.kafka
KILLS = 3


async def test_a_projection_killed_under_load_ends_equal_to_the_audit(
    kafka: Cluster, dsn: str, tmp_path: Path
) -> None:
    stack = Stack(kafka, Topics.unique("bo"))
    await stack.open()
    projection = ProjectionProcess(dsn, kafka.admin, stack.prefix, tmp_path / "projection.log")
    try:
        projection.start()
        plan = Plan(rounds=240, players=8, voids=12, step_s=60)
        async with Operator(kafka.operator, stack.topics, stack.partitions, brand="b1") as client:
            await fund(client, plan)
            load = asyncio.create_task(play(client, plan, STRATEGIES["basic"]))
            for _ in range(KILLS):
                await asyncio.sleep(random.uniform(1.5, 3.0))
                assert projection.alive(), (tmp_path / "projection.log").read_text()[-3000:]
                projection.kill()
                projection.start()
            tally = await asyncio.wait_for(load, 300)
        assert not tally.stalled, tally.stalled
        records = await read_run(kafka.admin, stack.topics)
        report = check(records)
        assert report.ok, report.violations[:20]
        await caught_up(dsn, await end_offsets(kafka.admin, stack.topics, stack.partitions))
        expected, found = audit_figures(records), database_figures(dsn)
        print(f"\nprojection after {KILLS} kill -9: {found}")
        assert found == expected
        assert found["rounds"] == report.rounds == tally.rounds > 0
        assert projection.starts == KILLS + 1
    finally:
        projection.stop()
        await stack.close()
