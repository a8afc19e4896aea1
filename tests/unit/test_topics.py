"""Topic names: the defaults are the contract, prefixes isolate tests."""

from __future__ import annotations

import time

import pytest
from aiokafka.errors import KafkaTimeoutError

from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics
from holdem.runtime import topics as topics_module
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


async def test_leaders_slow_to_answer_are_asked_again_until_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A ListOffsets unanswered in aiokafka's 10 s request timeout on a loaded machine is not a
    missing leader: the wait asks again until its own deadline (the hostile campaign's stack
    failed its setup on the first unanswered ask)."""
    asked: list[int] = []

    class SlowLeaders:
        def __init__(self, **_: object) -> None: ...

        async def start(self) -> None: ...

        async def stop(self) -> None: ...

        async def end_offsets(self, tps: list[object]) -> dict[object, int]:
            asked.append(len(tps))
            if len(asked) < 3:
                raise KafkaTimeoutError("Failed to get offsets by times in 10000 ms")
            return dict.fromkeys(tps, 0)

    monkeypatch.setattr(topics_module, "AIOKafkaConsumer", SlowLeaders)
    connection = KafkaConnection(bootstrap="localhost:1")
    deadline = time.monotonic() + 60
    await topics_module._wait_until_leaders_serve(connection, ["t"], 2, deadline)
    assert asked == [2, 2, 2]
