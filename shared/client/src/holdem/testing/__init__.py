"""``holdem.testing`` (``pip install holdem-client[testing]``): the whole Casino Hold'em stack in
containers for an operator's own integration tests, with one context manager.

    with holdem_stack("/path/to/holdem") as stack:      # the release's docker-compose.yml
        async with stack.operator() as operator:        # connected as the operator principal
            ...

The stack is the release's ``docker-compose.yml``, brought up by testcontainers'
``DockerCompose`` under a project name of its own, with random passwords and free host ports
(nothing of another stack on the same engine is touched), and taken down with its volumes and
images at the end. The engine is the one ``DOCKER_HOST`` names; when this process names none, the
one the release's ``deploy/docker/stack.sh`` finds (the engine ``make up`` provisioned, else the
default socket), which also provides the rest (base images built from Debian's packages where no
registry answers, the dealer's vault key, the CA bundle). A fixture
for pytest: ``holdem.testing.pytest_plugin``
(``pytest_plugins = ["holdem.testing.pytest_plugin"]``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from testcontainers.compose import DockerCompose

from holdem.client import Operator
from holdem.core.contracts import DeckForced, Mode, TableOpened, TableTerms
from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics

__all__ = ["PRINCIPALS", "Stack", "StackError", "holdem_stack", "play_money_terms"]

# The principals docker-compose.yml formats into the broker, each with its own password here.
PRINCIPALS = (
    "broker", "admin", "dealer", "wallet", "settlement", "query", "operator", "backoffice",
)  # fmt: skip
# The host ports docker-compose.yml publishes (HOLDEM_<NAME>_PORT), each a free one here.
PORTS = (
    "KAFKA", "PROMETHEUS", "BACKOFFICE",
    "DEALER_METRICS", "WALLET_METRICS", "SETTLEMENT_METRICS", "QUERY_METRICS",
)  # fmt: skip
UP_TIMEOUT_S = 900  # a cold engine builds every image first


class StackError(RuntimeError):
    """The stack could not be brought up (the last lines of what failed are in the message)."""


@dataclass
class _Compose(DockerCompose):
    """testcontainers' ``DockerCompose`` on a given engine (``docker --host``; None: the one
    this process's environment names)."""

    host: str | None = None

    @cached_property
    def compose_command_property(self) -> list[str]:
        binary, *rest = super().compose_command_property  # (cached: ours replaces it)
        return [binary, *(["--host", self.host] if self.host else []), *rest]


@dataclass
class Stack:
    """A running stack: how each principal reaches its broker from this host, its ports."""

    project: str
    ports: dict[str, int]
    passwords: dict[str, str]
    compose: DockerCompose = field(repr=False)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.ports['KAFKA']}"

    @property
    def prometheus_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['PROMETHEUS']}"

    @property
    def back_office_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['BACKOFFICE']}"

    def connection(self, principal: str = "operator") -> KafkaConnection:
        return KafkaConnection(
            bootstrap=self.bootstrap,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="SCRAM-SHA-512",
            username=principal,
            password=self.passwords[principal],
        )

    def operator(self) -> Operator:
        """An SDK ``Operator`` connected as the operator principal (``async with``)."""
        return Operator(self.connection("operator"), Topics())

    def admin(self) -> Operator:
        """An SDK ``Operator`` connected as admin: the table book's commands are its."""
        return Operator(self.connection("admin"), Topics())

    async def open_play_money_table(self, table_id: str, **changes: object) -> TableOpened:
        """A play-money table (``play_money_terms`` with ``changes``): forced decks play there."""
        async with self.admin() as admin:
            return await admin.create_table(table_id, play_money_terms(**changes))

    async def force_next_deck(self, player_id: str, cards: Sequence[str]) -> DeckForced:
        """The first ``cards`` of the player's next play-money round (a dealer in test mode,
        ADR 030: the deck's deal order is the player's two, the dealer's two, the flop, the
        turn, the river); ``Refused`` from a dealer not in test mode."""
        async with self.operator() as operator:
            return await operator.force_next_deck(player_id, cards)

    def logs(self, service: str) -> str:
        out, err = self.compose.get_logs(service)
        return out + err


def play_money_terms(**changes: object) -> TableTerms:
    """Play-money terms for a test table of the stack's operator (``default``): EUR, antes of
    1.00 to 1,000.00 in chips of 1, 5, 25 and 100, an AA Bonus up to 500.00."""
    terms = {
        "operator_id": "default",
        "currency": "EUR",
        "ante_min": 100,
        "ante_max": 100_000,
        "bonus_max": 50_000,
        "chips": (100, 500, 2_500, 10_000),
        "mode": Mode.FUN,
    }
    return TableTerms.model_validate({**terms, **changes})


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _release_env(project_dir: Path, secrets_dir: Path) -> dict[str, str]:
    """What the release's stack.sh provides (images, secrets), as KEY=value; {} without it."""
    script = project_dir / "deploy" / "docker" / "stack.sh"
    if not script.is_file():
        return {}
    done = subprocess.run(
        [str(script), "env"],
        env={**os.environ, "HOLDEM_SECRETS_DIR": str(secrets_dir)},
        capture_output=True,
        text=True,
        timeout=UP_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        raise StackError(f"{script} env failed: {done.stderr.strip()[-2000:]}")
    pairs = (line.removeprefix("export ").partition("=") for line in done.stdout.splitlines())
    return {key: value for key, _, value in pairs if key}


def _project_dir(given: str | os.PathLike[str] | None) -> Path:
    if given is not None:
        found = Path(given)
    elif env := os.environ.get("HOLDEM_STACK_DIR"):
        found = Path(env)
    else:
        here = Path.cwd().resolve()
        found = next(
            (p for p in (here, *here.parents) if (p / "docker-compose.yml").is_file()), here
        )
    if not (found / "docker-compose.yml").is_file():
        raise StackError(f"no docker-compose.yml in {found} (pass the release's folder)")
    return found.resolve()


@contextlib.contextmanager
def holdem_stack(
    project_dir: str | os.PathLike[str] | None = None, *, dealer_test_mode: bool = True
) -> Iterator[Stack]:
    """The stack up (``docker compose up --build --wait``) for the block, then down with its
    volumes and images. ``project_dir``: the release's folder (default ``HOLDEM_STACK_DIR``, else
    the nearest folder above the working directory with a docker-compose.yml).
    ``dealer_test_mode`` (default): the dealer runs in its explicit test mode (ADR 030): it
    takes ``force_next_deck`` for play-money rounds, and stops if a real-money table is opened;
    rounds at the default table (no table id) are dealt as ever, never from a forced deck."""
    where = _project_dir(project_dir)
    project = f"holdemtest{secrets.token_hex(4)}"
    with tempfile.TemporaryDirectory(prefix=f"{project}-") as tmp:
        secrets_dir = Path(tmp) / "secrets"
        secrets_dir.mkdir(mode=0o700)
        env = _release_env(where, secrets_dir)
        # The engine: this process's DOCKER_HOST, else the one stack.sh found (make up's).
        found = env.pop("DOCKER_HOST", None)
        host = None if os.environ.get("DOCKER_HOST") else found
        env.setdefault("HOLDEM_SECRETS_DIR", str(secrets_dir))
        ports = dict(zip(PORTS, _free_ports(len(PORTS)), strict=True))
        passwords = {principal: secrets.token_hex(12) for principal in PRINCIPALS}
        env |= {f"HOLDEM_{name}_PORT": str(port) for name, port in ports.items()}
        env |= {f"HOLDEM_{p.upper()}_PASSWORD": pw for p, pw in passwords.items()}
        env["HOLDEM_BACKOFFICE_ADMIN_PASSWORD"] = passwords["admin"]
        env["HOLDEM_DEALER_TEST_MODE"] = "true" if dealer_test_mode else "false"
        env["COMPOSE_PROJECT_NAME"] = project
        env_file = Path(tmp) / "stack.env"
        env_file.write_text("".join(f"{k}={v}\n" for k, v in env.items()))
        env_file.chmod(0o600)
        compose = _Compose(where, env_file=str(env_file), build=True, wait=True, host=host)
        try:
            try:
                compose.start()
            except subprocess.CalledProcessError as error:
                tail = (error.stderr or b"").decode(errors="replace").strip()[-2000:]
                raise StackError(f"docker compose up failed: {tail}") from None
            yield Stack(project, ports, passwords, compose)
        finally:
            subprocess.run(
                [*compose.compose_command_property, "down", "--volumes", "--rmi", "local"],
                cwd=where,
                capture_output=True,
                timeout=300,
                check=False,
            )
