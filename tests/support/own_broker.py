"""A broker of a test module's own, kept on its data so that a test can kill -9 it and start it
again (not the session's), and a deployment of the services against it on fresh topics."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from holdem.core.wire.topics import Topics
from holdem.ops.broker import LocalBroker
from holdem.ops.launcher import Launcher
from holdem.runtime.topics import ensure_topics


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
