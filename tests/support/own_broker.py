"""A broker of a test module's own, kept on its data so that a test can kill -9 it and start it
again (not the session's), and a deployment of the services against it on fresh topics."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from holdem.core.contracts import Deposit, FundsDeposited
from holdem.core.wire.topics import Topics
from holdem.harness.audit import read_run
from holdem.ops.broker import LocalBroker
from holdem.ops.launcher import Launcher
from holdem.runtime.topic_setup import ensure_topics

MAX_RESTARTS = 20  # a supervisor's: a crash loop ends a test instead of running on


@asynccontextmanager
async def kept_broker(directory: Path) -> AsyncIterator[LocalBroker]:
    """Up on ``directory`` for the block; down and wiped after."""
    own = LocalBroker(directory / "kafka", keep=True)
    try:
        await asyncio.to_thread(own.up)
        yield own
    finally:
        await asyncio.to_thread(own.down, wipe=True)


async def deployment(
    broker: LocalBroker,
    tmp_path: Path,
    tag: str,
    partitions: int,
    extra: dict[str, str] | None = None,
) -> tuple[Topics, Launcher]:
    """Fresh topics (tag-prefixed) granted to the game's principals, and a launcher of every
    service on them, each as its own principal (nothing started)."""
    kafka = broker.principals()
    topics = Topics.unique(tag)
    await ensure_topics(kafka["admin"], topics, partitions=partitions, wait=60)
    await asyncio.to_thread(broker.authorize, topics.prefix)
    assert broker.bootstrap is not None
    launcher = Launcher(
        broker.bootstrap,
        tmp_path / tag,
        topics.prefix,
        partitions,
        credentials=kafka,
        extra_env=extra or {},
    )
    return topics, launcher


class Supervise:
    """Restarts what ended without being asked, as an orchestrator would, at most
    ``MAX_RESTARTS`` times; records each exit code and what the process logged before it."""

    def __init__(self, launcher: Launcher) -> None:
        self.launcher = launcher
        self.exits: list[tuple[str, int | None, str]] = []
        self.ready_at: dict[str, float] = {}  # label -> when its latest start was ready

    async def run(self) -> None:
        while True:
            for label, service in list(self.launcher.services.items()):
                if service.retired:
                    continue
                if service.alive:
                    if label not in self.ready_at and service.replays():
                        self.ready_at[label] = time.monotonic()
                    continue
                if len(self.exits) >= MAX_RESTARTS:
                    continue
                self.exits.append((label, service.exit_code, service.log_since_start()))
                self.ready_at.pop(label, None)
                service.start()
            await asyncio.sleep(0.5)

    def codes(self) -> list[int | None]:
        return [code for _, code, _ in self.exits]


async def answered(
    broker: LocalBroker, topics: Topics, deposits: list[Deposit], within_s: float
) -> None:
    """Until every deposit has its FundsDeposited (AssertionError after ``within_s``)."""
    wanted = {d.command_id for d in deposits}
    deadline = time.monotonic() + within_s
    while True:
        records = await read_run(broker.connection("admin"), topics, roles=["wallet"])
        found = {r.message.command_id for r in records if isinstance(r.message, FundsDeposited)}
        if wanted <= found:
            return
        assert time.monotonic() < deadline, f"unanswered: {sorted(wanted - found)}"
        await asyncio.sleep(1.0)
