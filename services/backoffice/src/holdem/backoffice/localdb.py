"""A throwaway PostgreSQL cluster: initdb and pg_ctl from Debian's package (``postgresql``;
deploy/postgres/provision.sh installs it), run as a non-root system user on 127.0.0.1 and a free
port, in a temporary directory. For the tests, the benchmarks and a local back office.

``python -m holdem.backoffice.localdb``: start one, create its database, print ``dsn: <conninfo>``
and keep it until SIGTERM or SIGINT, then stop and remove it (``make serve`` runs it so); exit 3
with one line if no server is installed or it does not start."""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg

BIN_DIRS = "/usr/lib/postgresql/*/bin"
SYSTEM_USER = "holdem-pg"  # PostgreSQL refuses to run as root


class PostgresUnavailableError(RuntimeError):
    """No server could be found or started: the back office's tests fail rather than skip."""


@dataclass(frozen=True)
class Postgres:
    host: str
    port: int
    user: str

    def dsn(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}@{self.host}:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A fresh, empty database ``name``; its conninfo."""
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)


def bin_dir() -> Path:
    """The newest installed server's programs (Debian: /usr/lib/postgresql/<major>/bin)."""
    found = sorted(
        (Path(p) for p in glob.glob(BIN_DIRS) if (Path(p) / "initdb").exists()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if not found:
        raise PostgresUnavailableError(
            "no PostgreSQL server installed (deploy/postgres/provision.sh installs Debian's)"
        )
    return found[-1]


def _as_user() -> tuple[list[str], str]:
    """The command prefix that runs a server program as a non-root user, and that user."""
    if os.geteuid() != 0:
        return [], pwd.getpwuid(os.geteuid()).pw_name
    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                SYSTEM_USER,
            ],
            check=True,
        )
    return ["runuser", "-u", SYSTEM_USER, "--"], SYSTEM_USER


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def postgres_cluster(*, durable: bool = False) -> Iterator[Postgres]:
    """initdb, start, yield, stop and remove. ``durable``: fsync and synchronous commits on
    (PostgreSQL's defaults); off by default, since the cluster is thrown away."""
    programs = bin_dir()
    prefix, user = _as_user()
    base = Path(tempfile.mkdtemp(prefix="holdem-pg-"))
    data, log = base / "data", base / "server.log"
    port = free_port()
    try:
        if prefix:
            shutil.chown(base, user)
        run = [*prefix]
        subprocess.run(
            [*run, str(programs / "initdb"), "-D", str(data), "-U", user, "--auth=trust",
             "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync"],
            check=True, capture_output=True,
        )  # fmt: skip
        options = f"-c listen_addresses=127.0.0.1 -p {port} -k {base} -c max_connections=100"
        if not durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        started = subprocess.run(
            [*run, str(programs / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options,
             "-w", "-t", "60", "start"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if started.returncode != 0:
            tail = log.read_text()[-2000:] if log.exists() else started.stderr
            raise PostgresUnavailableError(f"pg_ctl start failed: {tail}")
        yield Postgres("127.0.0.1", port, user)
    except (subprocess.CalledProcessError, OSError) as error:
        raise PostgresUnavailableError(str(error)) from error
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(
                [*prefix, str(programs / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                capture_output=True,
                check=False,
            )
        shutil.rmtree(base, ignore_errors=True)


UNAVAILABLE = 3  # main's exit status when there is no PostgreSQL to run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m holdem.backoffice.localdb", description=__doc__
    )
    parser.add_argument("--database", default="holdem", help="the database to create")
    args = parser.parse_args(argv)
    stopping = [signal.SIGTERM, signal.SIGINT]
    signal.pthread_sigmask(signal.SIG_BLOCK, stopping)  # from now on they wait for sigwait
    try:
        with postgres_cluster() as postgres:
            print(f"dsn: {postgres.create_database(args.database)}", flush=True)
            signal.sigwait(stopping)
    except PostgresUnavailableError as error:
        print(f"PostgreSQL unavailable: {str(error).splitlines()[0]}", file=sys.stderr, flush=True)
        return UNAVAILABLE
    return 0


if __name__ == "__main__":
    sys.exit(main())
