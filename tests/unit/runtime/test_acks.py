"""ADR 036: a transaction's offsets wait for its records' acknowledgements, never unboundedly."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from holdem.runtime.acks import Unacknowledged, acknowledged


def futures(n: int) -> list[asyncio.Future[Any]]:
    loop = asyncio.get_running_loop()
    return [loop.create_future() for _ in range(n)]


async def test_it_returns_once_every_record_is_acknowledged() -> None:
    sent = futures(3)
    waiting = asyncio.create_task(acknowledged(sent, within_s=60.0))
    for future in sent[:2]:
        future.set_result(None)
    await asyncio.sleep(0)
    assert not waiting.done()
    sent[2].set_result(None)
    await asyncio.wait_for(waiting, 60.0)


async def test_nothing_sent_needs_no_wait() -> None:
    await acknowledged([], within_s=0.0)


async def test_a_failed_record_fails_the_wait_with_its_error() -> None:
    sent = futures(2)
    sent[0].set_result(None)
    sent[1].set_exception(ConnectionError("gone"))
    with pytest.raises(ConnectionError, match="gone"):
        await acknowledged(sent, within_s=60.0)


async def test_records_never_answered_end_the_wait_at_its_bound() -> None:
    sent = futures(2)
    sent[0].set_result(None)
    with pytest.raises(Unacknowledged, match="1 of 2"):
        await acknowledged(sent, within_s=0.01)
    assert not sent[1].cancelled()  # aiokafka's own future: left to the producer
