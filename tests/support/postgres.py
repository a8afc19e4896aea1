"""PostgreSQL for the tests: deploy/postgres/provision.sh (installs Debian's package when it is
absent), then a throwaway cluster of ``holdem.backoffice.localdb`` for the session."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

from holdem.backoffice.localdb import Postgres, PostgresUnavailableError, free_port
from holdem.backoffice.localdb import postgres_cluster as local_cluster

ROOT = Path(__file__).resolve().parents[2]
PROVISION = ROOT / "deploy" / "postgres" / "provision.sh"
__all__ = ["Postgres", "PostgresUnavailableError", "free_port", "postgres_cluster"]


@contextlib.contextmanager
def postgres_cluster() -> Iterator[Postgres]:
    done = subprocess.run([str(PROVISION)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise PostgresUnavailableError(f"{PROVISION}: {done.stderr.strip() or 'failed'}")
    with local_cluster() as cluster:
        yield cluster
