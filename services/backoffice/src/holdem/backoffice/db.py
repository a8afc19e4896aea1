"""The reporting database: connecting (psycopg 3) and migrating (Alembic, programmatically)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
from alembic import command
from alembic.config import Config

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(dsn: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", sqlalchemy_url(dsn).replace("%", "%%"))
    return config


def sqlalchemy_url(dsn: str) -> str:
    """SQLAlchemy's URL for a ``postgresql://`` conninfo, through the psycopg 3 driver.

    >>> sqlalchemy_url("postgresql://u@h:5/db")
    'postgresql+psycopg://u@h:5/db'
    """
    for scheme in ("postgresql://", "postgres://"):
        if dsn.startswith(scheme):
            return "postgresql+psycopg://" + dsn.removeprefix(scheme)
    raise ValueError(f"expected a postgresql:// URL, got {dsn.split('://')[0]}://...")


def upgrade(dsn: str) -> None:
    """Bring the schema to the latest revision (a no-op when it is there already)."""
    command.upgrade(alembic_config(dsn), "head")


def connect(dsn: str) -> psycopg.Connection[tuple[Any, ...]]:
    """Autocommit, so that every ``conn.transaction()`` is a real transaction, never a savepoint
    inside an implicit one that a kill would roll back."""
    return psycopg.connect(dsn, autocommit=True)
