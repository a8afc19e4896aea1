"""Alembic's environment: the back office's schema is plain SQL, run on the configured URL."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine, pool

url = context.config.get_main_option("sqlalchemy.url")
assert url, "sqlalchemy.url is not set (holdem.backoffice.db.upgrade sets it)"
engine = create_engine(url, poolclass=pool.NullPool)
with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=None)
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
