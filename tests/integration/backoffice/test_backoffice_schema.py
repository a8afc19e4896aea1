"""The migrations run on a real PostgreSQL, twice without harm."""

from __future__ import annotations

import pytest

from holdem.backoffice import db

pytestmark = pytest.mark.postgres


def test_upgrade_creates_the_tables_and_is_idempotent(dsn: str) -> None:
    db.upgrade(dsn)
    with db.connect(dsn) as conn:
        tables = {
            name
            for (name,) in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            ).fetchall()
        }
    assert {"rounds", "bets", "movements", "sessions", "tracking", "voids"} <= tables
