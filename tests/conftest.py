"""Session-wide fixtures: one real Kafka broker per test session, fresh topics per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.kafka import BrokerUnavailableError, kafka_broker

from holdem.runtime.topics import Topics, ensure_topics

TEST_PARTITIONS = 3


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    """Bootstrap address of a real broker, started on first request and stopped at session end."""
    try:
        with kafka_broker() as bootstrap:
            yield bootstrap
    except BrokerUnavailableError as exc:
        # A missing broker is a failure of the run, never a skip.
        pytest.fail(f"no Kafka broker for the tests: {exc}", pytrace=False)


@pytest.fixture
async def topics(kafka_bootstrap: str) -> Topics:
    """The game's topics under a unique prefix, created with TEST_PARTITIONS partitions each."""
    fresh = Topics.unique()
    await ensure_topics(kafka_bootstrap, fresh, partitions=TEST_PARTITIONS, wait=60)
    return fresh
