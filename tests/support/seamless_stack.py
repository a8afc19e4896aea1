"""The three services in seamless mode on a real broker, the reference operator wallet answering
as the operator principal (ADR 015)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from holdem.client.seamless_run import serve
from holdem.client.seamless_sim import FaultyOperator
from holdem.core.wire.topics import Topics
from support.kafka import Cluster
from support.stack import Stack

SEAMLESS = {"wallet_mode": "seamless", "seamless_debit_timeout_s": 3.0, "seamless_retry_s": 1.0}


@contextlib.asynccontextmanager
async def bridge(kafka: Cluster, operator: FaultyOperator) -> AsyncIterator[Stack]:
    """The three services in seamless mode on fresh topics, ``operator`` answering as the
    operator principal."""
    stack = Stack(kafka, Topics.unique("seamless"), wallet_settings=dict(SEAMLESS))
    await stack.open()
    stopping = asyncio.Event()
    task = asyncio.create_task(
        serve(kafka.operator, stack.topics, operator, step_s=0.2, stopping=stopping)
    )
    try:
        yield stack
    finally:
        stopping.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, 10)
        await stack.close()
    if task.done() and task.exception() is not None:
        raise task.exception()  # type: ignore[misc]
