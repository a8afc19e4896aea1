"""The back office's fixtures: one throwaway PostgreSQL cluster per session, a fresh database
per test (migrated), never a skip when PostgreSQL is missing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from support.postgres import Postgres, PostgresUnavailableError, postgres_cluster

from holdem.backoffice import db


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    try:
        with postgres_cluster() as cluster:
            yield cluster
    except PostgresUnavailableError as exc:
        pytest.fail(f"no PostgreSQL for the back office's tests: {exc}", pytrace=False)


@pytest.fixture
def dsn(postgres: Postgres) -> str:
    """A fresh database, migrated to the latest revision."""
    url = postgres.create_database(f"bo_{uuid.uuid4().hex[:12]}")
    db.upgrade(url)
    return url
