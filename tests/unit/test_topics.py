"""Topic names: the defaults are the contract, prefixes isolate tests."""

from __future__ import annotations

import time

import pytest
from aiokafka.errors import KafkaTimeoutError

from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics
from holdem.runtime import topics
from holdem.runtime.topics import ensure_topics


def test_default_names_are_the_documented_contract() -> None:
    assert Topics().names() == (
        "holdem.commands",
        "holdem.rounds",
        "holdem.wallet",
        "holdem.dealer.vault",
        "holdem.rejected",
        "holdem.queries",
        "holdem.replies",
        "holdem.seamless.replies",
        "holdem.admin",
        "holdem.tables",
    )


def test_a_prefix_applies_to_every_topic() -> None:
    assert Topics().with_prefix("t1").names() == tuple(f"t1.{n}" for n in Topics().names())


def test_unique_topics_never_share_a_name() -> None:
    first, second = Topics.unique(), Topics.unique()
    assert not set(first.names()) & set(second.names())


async def test_ensure_topics_refuses_a_zero_partition_count() -> None:
    with pytest.raises(ValueError, match="partitions"):
        await ensure_topics("127.0.0.1:1", Topics(), partitions=0)


NOWHERE = KafkaConnection("127.0.0.1:1")


class _SlowLeaders:
    """A consumer whose ListOffsets times out (aiokafka's 10 s) ``fails`` times, then answers."""

    def __init__(self, fails: int) -> None:
        self.fails, self.asked = fails, 0

    def __call__(self, **_: object) -> _SlowLeaders:
        return self

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def end_offsets(self, tps: list[object]) -> dict[object, int]:
        self.asked += 1
        if self.asked <= self.fails:
            raise KafkaTimeoutError("Failed to get offsets by times in 10000 ms")
        return dict.fromkeys(tps, 0)


async def test_leaders_are_awaited_until_the_callers_deadline_not_aiokafkas(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A loaded broker answered NOT_LEADER for longer than aiokafka's request timeout: the
    # wait gave up at 10 s with 20 s of its deadline left (the Kafka tests' setup failed).
    slow = _SlowLeaders(fails=2)
    monkeypatch.setattr(topics, "AIOKafkaConsumer", slow)
    await topics._wait_until_leaders_serve(NOWHERE, ["t"], 1, time.monotonic() + 30)
    assert slow.asked == 3
    slow = _SlowLeaders(fails=99)
    monkeypatch.setattr(topics, "AIOKafkaConsumer", slow)
    with pytest.raises(KafkaTimeoutError):
        await topics._wait_until_leaders_serve(NOWHERE, ["t"], 1, time.monotonic() - 1)
    assert slow.asked == 1
