"""The back office of a served deployment (`make serve`, ADR 026), as processes: a throwaway
local PostgreSQL (``python -m holdem.backoffice.localdb``), the projection as the ``backoffice``
principal and the web back office on a free port, with a first user whose password is made
here and printed once. Run through ``python -m``: holdem.ops does not import holdem.backoffice.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from holdem.ops.broker import LaunchError, LocalBroker
from holdem.ops.launcher import ServiceProcess

USERNAME = "admin"
ROLE = "regulator"  # every page, read-only like every page of the back office
OPERATOR = "default"  # the projection's operator of records without an operator header
UNAVAILABLE = 3  # holdem.backoffice.localdb's exit status when there is no PostgreSQL
START_TIMEOUT_S = 90.0
STOP_ORDER = ("backoffice", "backoffice-projection", "postgres")  # the web first, the database last


@dataclass
class BackOffice:
    url: str
    password: str
    processes: list[ServiceProcess] = field(default_factory=list)
    username: str = USERNAME

    def line(self) -> str:
        return (
            f"back office: {self.url} (user {self.username}, {ROLE} of operator {OPERATOR}, "
            f"password {self.password}; each page's JSON is its path + .json; its database is "
            "thrown away at Ctrl-C, the projection reads Kafka again at the next start)"
        )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _base_env() -> dict[str, str]:
    """This environment without HOLDEM_* (no other deployment's settings leak in)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_")}
    return {**env, "PYTHONUNBUFFERED": "1"}


def _module(*args: str) -> list[str]:
    return [sys.executable, "-m", *args]


async def _database(process: ServiceProcess) -> str | None:
    """The DSN the local PostgreSQL prints; None if it exited saying none is installed."""
    started = time.monotonic()
    while True:
        for line in process.log_since_start().splitlines():
            if line.startswith("dsn: "):
                return line.removeprefix("dsn: ").strip()
        if not process.alive:
            if process.exit_code == UNAVAILABLE:
                return None
            raise LaunchError(f"postgres exited ({process.exit_code}):\n{process.log_tail()}")
        if time.monotonic() - started > START_TIMEOUT_S:
            raise LaunchError(f"postgres not up in {START_TIMEOUT_S:.0f}s:\n{process.log_tail()}")
        await asyncio.sleep(0.2)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


async def _web_ready(process: ServiceProcess, url: str) -> None:
    started = time.monotonic()
    while not await asyncio.to_thread(_answers, url + "login"):
        if not process.alive:
            raise LaunchError(f"backoffice exited ({process.exit_code}):\n{process.log_tail()}")
        if time.monotonic() - started > START_TIMEOUT_S:
            raise LaunchError(f"backoffice not up in {START_TIMEOUT_S:.0f}s:\n{process.log_tail()}")
        await asyncio.sleep(0.3)


def _cli(
    name: str, command: str, log_dir: Path, *envs: dict[str, str], **more: str
) -> ServiceProcess:
    """``holdem-backoffice <command>`` as the process ``name``, logging to ``<name>.log``."""
    env = {k: v for e in envs for k, v in e.items()} | more
    log = log_dir / ("backoffice-projection.log" if name == "projection" else f"{name}.log")
    return ServiceProcess(name, env, log, argv=_module("holdem.backoffice.cli", command))


async def start(broker: LocalBroker, log_dir: Path, *, metrics_port: int = 0) -> BackOffice | str:
    """Start the back office against ``broker``: its processes (to watch and to ``stop``), URL
    and first user's password; or, when it cannot run here, the one line that says why."""
    if not (broker.clients_dir / "backoffice.env").is_file():
        return (
            "back office: off (this broker's storage predates its backoffice principal; "
            "make serve WIPE=1 makes one with it)"
        )
    base = _base_env()
    postgres = ServiceProcess(
        "postgres", base, log_dir / "postgres.log", argv=_module("holdem.backoffice.localdb")
    )
    running = [postgres]
    try:
        postgres.start()
        dsn = await _database(postgres)
        if dsn is None:
            reason = postgres.log_since_start().strip().splitlines()[-1]
            return f"back office: off ({reason}; deploy/postgres/provision.sh installs it)"
        with_db = {**base, "HOLDEM_BACKOFFICE_DSN": dsn}
        password = secrets.token_urlsafe(18)
        add_user = _module("holdem.backoffice.cli", "add-user", USERNAME, "--role", ROLE)
        done = await asyncio.to_thread(
            subprocess.run,
            [*add_user, "--operator", OPERATOR],
            env={**with_db, "HOLDEM_BACKOFFICE_PASSWORD": password},
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
            check=False,
        )  # migrates the schema too
        if done.returncode != 0:
            raise LaunchError(f"holdem-backoffice add-user failed:\n{done.stderr[-2000:]}")
        port = _free_port()
        kafka = broker.connection("backoffice").env()
        metrics = {
            "HOLDEM_BACKOFFICE_METRICS_PORT": str(metrics_port),
            "HOLDEM_BACKOFFICE_METRICS_HOST": "127.0.0.1",  # this host only, as compose's
        }
        projection = _cli("backoffice-projection", "project", log_dir, with_db, kafka, metrics)
        web_at = {
            "HOLDEM_BACKOFFICE_HOST": "127.0.0.1",
            "HOLDEM_BACKOFFICE_PORT": str(port),
            # its /metrics on a port of its own (issue 29), or none when metrics are off
            "HOLDEM_BACKOFFICE_WEB_METRICS_HOST": "127.0.0.1",
            "HOLDEM_BACKOFFICE_WEB_METRICS_PORT": str(_free_port() if metrics_port else 0),
        }
        web = _cli("backoffice", "serve", log_dir, with_db, web_at)
        for process in (projection, web):
            running.append(process)
            process.start()
        url = f"http://127.0.0.1:{port}/"
        await _web_ready(web, url)
        return BackOffice(url, password, running)
    except BaseException:
        await stop(running)
        raise


async def stop(processes: list[ServiceProcess]) -> None:
    """The web back office, then the projection, then PostgreSQL (SIGTERM: it removes its data)."""
    for name in STOP_ORDER:
        for process in processes:
            if process.name == name:
                await process.stop()
