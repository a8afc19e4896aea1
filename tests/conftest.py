"""Session-wide fixtures: one real Kafka broker per test session (authentication and ACLs on),
fresh topics per test, granted to the game's principals; one throwaway PostgreSQL cluster per
session for the back office, a fresh migrated database per test. A missing broker or database
fails the run, never a skip."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
from support.kafka import BrokerUnavailableError, Cluster, kafka_broker
from support.tiers import unmarked

from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics
from holdem.runtime.topic_setup import ensure_topics

if TYPE_CHECKING:
    from support.postgres import Postgres

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


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """A throwaway PostgreSQL cluster, started on first request and removed at session end."""
    # Imported here: psycopg and alembic are seconds of import that no other tier needs.
    from support.postgres import PostgresUnavailableError, postgres_cluster

    try:
        with postgres_cluster() as cluster:
            yield cluster
    except PostgresUnavailableError as exc:
        pytest.fail(f"no PostgreSQL for the back office's tests: {exc}", pytrace=False)


@pytest.fixture
def dsn(postgres: Postgres) -> str:
    """A fresh database, migrated to the latest revision."""
    from holdem.backoffice import db

    url = postgres.create_database(f"bo_{uuid.uuid4().hex[:12]}")
    db.upgrade(url)
    return url


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Refuse a collection in which a test needs a broker or a database without saying so."""
    if found := unmarked(items):
        raise pytest.UsageError("\n".join(found))
