"""Topic names: the defaults are the contract, prefixes isolate tests; topic creation waits for
slow partition leaders until its own deadline."""

from __future__ import annotations

import time

import pytest
from aiokafka import TopicPartition
from aiokafka.admin import NewTopic
from aiokafka.errors import KafkaTimeoutError, RequestTimedOutError

import holdem.runtime.topic_setup as topics_module
from holdem.core.wire.connection import as_connection
from holdem.core.wire.topics import Topics
from holdem.runtime.topic_setup import ensure_topics


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


class _SlowLeaders:
    """A consumer whose ListOffsets times out (aiokafka's one 10 s request) `slow` times, then
    answers: partition leaders slow to serve on a loaded broker."""

    def __init__(self, slow: int) -> None:
        self.slow = slow
        self.asked = 0
        self.stopped = False

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        self.stopped = True

    async def end_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        self.asked += 1
        if self.asked <= self.slow:
            raise KafkaTimeoutError("Failed to get offsets by times in 10000 ms")
        return dict.fromkeys(tps, 0)


async def test_slow_partition_leaders_are_asked_again_until_the_deadline(monkeypatch) -> None:
    consumer = _SlowLeaders(slow=3)
    monkeypatch.setattr(topics_module, "AIOKafkaConsumer", lambda **_: consumer)
    deadline = time.monotonic() + 60
    await topics_module._wait_until_leaders_serve(as_connection("h:1"), ["a", "b"], 2, deadline)
    assert consumer.asked == 4 and consumer.stopped


async def test_slow_partition_leaders_past_the_deadline_fail(monkeypatch) -> None:
    consumer = _SlowLeaders(slow=1_000)
    monkeypatch.setattr(topics_module, "AIOKafkaConsumer", lambda **_: consumer)
    with pytest.raises(KafkaTimeoutError):
        await topics_module._wait_until_leaders_serve(
            as_connection("h:1"), ["a"], 1, time.monotonic() - 1
        )
    assert consumer.asked == 1 and consumer.stopped


class _SlowController:
    """An admin client whose CreateTopics times out on the client side (one 10 s request)
    `slow` times, then answers: a controller slow to create topics on a loaded broker."""

    def __init__(self, slow: int) -> None:
        self.slow = slow
        self.asked = 0

    async def create_topics(self, new: list[NewTopic], timeout_ms: int) -> str:
        self.asked += 1
        if self.asked <= self.slow:
            raise RequestTimedOutError()
        return "created"


async def test_a_slow_controller_is_asked_again_to_create_the_topics_until_the_deadline() -> None:
    admin = _SlowController(slow=2)
    new = [NewTopic("a", 1, 1)]
    created = await topics_module._create(admin, new, time.monotonic() + 60)  # type: ignore[arg-type]
    assert created == "created" and admin.asked == 3


async def test_a_slow_controller_past_the_deadline_fails() -> None:
    admin = _SlowController(slow=1_000)
    with pytest.raises(RequestTimedOutError):
        await topics_module._create(admin, [], time.monotonic() - 1)  # type: ignore[arg-type]
    assert admin.asked == 1
