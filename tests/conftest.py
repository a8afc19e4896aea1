"""Session-wide fixtures: one real Kafka broker per test session (authentication and ACLs on),
fresh topics per test, granted to the game's principals."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.kafka import BrokerUnavailableError, Cluster, kafka_broker

from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics
from holdem.runtime.topics import ensure_topics

TEST_PARTITIONS = 3


@pytest.fixture(scope="session")
def kafka() -> Iterator[Cluster]:
    """A real broker, started on first request and stopped at session end, and its principals."""
    try:
        with kafka_broker() as cluster:
            yield cluster
    except BrokerUnavailableError as exc:
        # A missing broker is a failure of the run, never a skip.
        pytest.fail(f"no Kafka broker for the tests: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka: Cluster) -> str:
    """The broker's address (connecting needs a principal: see ``operator``, ``kafka``)."""
    return kafka.bootstrap


@pytest.fixture(scope="session")
def operator(kafka: Cluster) -> KafkaConnection:
    """The operator's connection: what the tests send commands and read events as."""
    return kafka.operator


@pytest.fixture
async def topics(kafka: Cluster) -> Topics:
    """The game's topics under a unique prefix, created (as admin) with TEST_PARTITIONS partitions
    each, and the game's ACL set granted on them."""
    fresh = Topics.unique()
    await ensure_topics(kafka.admin, fresh, partitions=TEST_PARTITIONS, wait=60)
    await kafka.authorize(prefix_of(fresh))
    return fresh


def prefix_of(topics: Topics) -> str:
    return topics.commands.removesuffix(".holdem.commands")
