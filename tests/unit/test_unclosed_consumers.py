"""Issue 26 item 6: the readers whose consumer could not start (broker away, a timeout cancelling
the start) stop it before raising. Each left it open before: aiokafka warned "Unclosed
AIOKafkaConsumer" when it was collected (three at the end of ``make test``), and its client
kept its sockets until then.

No broker: ``AIOKafkaConsumer.start`` is replaced by one that fails at once (or hangs, for the
caller's timeout), and every consumer that was started is checked closed afterwards."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.errors import KafkaConnectionError

from holdem.client import Operator
from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics
from holdem.harness.audit_read import read_topic
from holdem.runtime import replay, snapshots
from holdem.runtime import topic_setup as topics
from holdem.runtime.kafka import KafkaFollower, KafkaGroupConsumer
from holdem.runtime.transport import GroupSettings, TopicPartition

NOWHERE = KafkaConnection("127.0.0.1:1")


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[AIOKafkaConsumer]]:
    """Every consumer whose start was called; each start fails at once."""
    calls: list[AIOKafkaConsumer] = []

    async def start(self: AIOKafkaConsumer) -> None:
        calls.append(self)
        raise KafkaConnectionError("no broker (test)")

    monkeypatch.setattr(AIOKafkaConsumer, "start", start)
    yield calls


def nothing(*_: Any) -> None:
    return None


async def operator_wallet_log() -> None:
    client = Operator(NOWHERE, Topics(), 3)
    await client.wallet_log("p1")


READERS: dict[str, Callable[[], Awaitable[Any]]] = {
    "replay": lambda: replay.replay(NOWHERE, ["t"], [0], nothing),
    "latest snapshots": lambda: snapshots.latest(NOWHERE, "t", [0]),
    "audit read": lambda: read_topic(NOWHERE, "t"),
    "topics wait": lambda: topics._wait_until_leaders_serve(
        NOWHERE, ["t"], 1, time.monotonic() + 30
    ),
    "book follower": lambda: KafkaFollower(NOWHERE, [TopicPartition("t", 0)]).start(),
    "group consumer": lambda: KafkaGroupConsumer(
        NOWHERE, GroupSettings("g", "g-0", 500, 6_000, 1_000, 300_000)
    ).start(),
    "operator wallet log": operator_wallet_log,
}


@pytest.mark.parametrize("reader", sorted(READERS))
async def test_a_reader_whose_consumer_cannot_start_closes_it(
    reader: str, started: list[AIOKafkaConsumer]
) -> None:
    with pytest.raises(KafkaConnectionError):
        await READERS[reader]()
    assert started, "the reader started no consumer"
    assert all(consumer._closed for consumer in started), f"{reader} left its consumer open"


async def test_a_consumer_start_cut_by_the_topics_wait_deadline_is_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[AIOKafkaConsumer] = []

    async def start(self: AIOKafkaConsumer) -> None:  # a broker that never answers
        calls.append(self)
        await asyncio.Event().wait()

    monkeypatch.setattr(AIOKafkaConsumer, "start", start)
    with pytest.raises(TimeoutError):
        await topics._wait_until_leaders_serve(NOWHERE, ["t"], 1, time.monotonic() + 0.2)
    assert calls and all(consumer._closed for consumer in calls)


async def test_the_back_office_projection_whose_consumer_cannot_start_closes_it(
    started: list[AIOKafkaConsumer], monkeypatch: pytest.MonkeyPatch
) -> None:
    from holdem.backoffice import db
    from holdem.backoffice.project import Projection
    from holdem.backoffice.settings import BackofficeSettings

    monkeypatch.setattr(db, "upgrade", nothing)  # no database: the consumer's start fails first
    projection = Projection(BackofficeSettings(), NOWHERE)
    with pytest.raises(KafkaConnectionError):
        await projection.run()
    assert started and all(consumer._closed for consumer in started)
