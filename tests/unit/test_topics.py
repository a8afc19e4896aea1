"""Topic names: the defaults are the contract, prefixes isolate tests."""

from __future__ import annotations

import pytest

from holdem.core.wire.topics import Topics
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
