"""The container page walked as written (issue 30): every shell command of docs/containers.md, the
page the README sends a reader to, run in a `git clone` of the repository, in the page's order of
use: `make up`, a round played as the operator with the env file `make up` wrote, the reader's own
docker CLI pointed at the engine, `make down`, `make engine-down`.

Only the host ports (free ones) and the compose project name (one of this run) change, so the walk
neither meets nor disturbs another stack on this machine. The engine is the one this session's
tests use (its DOCKER_HOST), as a reader's shell would name it: the clone must not start a second
dockerd and build every image again, and its `make engine-down` must stop nothing it did not start.

A command added to the page fails this test until it is walked here or listed, with its reason,
in NOT_RUNNABLE; a command dropped from the page fails it too, so no step walks a stale command.
"""

from __future__ import annotations

import os
import re
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.compose import (
    ENGINE,
    HOST_PORT_VARS,
    REPO,
    SERVICES,
    UP_TIMEOUT_S,
    engine_answers,
    free_ports,
)

pytestmark = [pytest.mark.containers, pytest.mark.timeout(2 * UP_TIMEOUT_S + 600)]

PAGE = REPO / "docs" / "containers.md"
UP = "make up"
DOWN = "make down"
ENGINE_DOWN = "make engine-down"
DOCKER_CLI = 'eval "$(deploy/docker/engine.sh env)"'
OPERATOR = (
    "set -a; . deploy/compose/.secrets/operator.env; set +a",
    "uv run python examples/operator_round.py",
)
WALKED = {UP, DOWN, ENGINE_DOWN, DOCKER_CLI, *OPERATOR}
NOT_RUNNABLE = {
    "docker compose --profile grafana up -d grafana": (
        "Grafana's image comes only from a registry, and none answers here (Debian has no "
        "package, the Go module proxy refuses it): the container tests evaluate every panel's "
        "expression against the stack's Prometheus instead"
    ),
}
PORTS = (*HOST_PORT_VARS, "HOLDEM_GRAFANA_PORT")  # every host port the compose file publishes
LONG_RUNNING = {
    "kafka-controller",
    "kafka",
    "prometheus",
    "postgres",
    "backoffice",
    "backoffice-projection",
    *SERVICES,
}


def page_commands(text: str) -> list[str]:
    """Each line of the page's ```sh blocks, its trailing comment dropped, in page order."""
    commands = []
    for block in re.findall(r"^ *```sh\n(.*?)^ *```", text, re.MULTILINE | re.DOTALL):
        for line in block.splitlines():
            command = re.sub(r"\s+#\s.*$", "", line).strip()
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


def test_every_command_on_the_page_is_walked_or_listed_with_its_reason() -> None:
    on_page = set(page_commands(PAGE.read_text()))
    assert on_page - WALKED - set(NOT_RUNNABLE) == set(), "new on the page: walk it or list it"
    assert (WALKED | set(NOT_RUNNABLE)) - on_page == set(), "walked here, gone from the page"


@dataclass
class Clone:
    """A fresh clone and the environment a reader's shell has there (plus ports and project)."""

    path: Path
    env: dict[str, str]
    project: str

    def run(self, script: str, timeout: float) -> str:
        """``script`` in bash in the clone: its output, or AssertionError with the end of both."""
        done = subprocess.run(
            ["bash", "-c", f"set -euo pipefail\n{script}"],
            cwd=self.path,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"{script!r} exited {done.returncode}:\n{output[-4000:]}"
        return output

    def containers(self, *flags: str) -> set[str]:
        listed = subprocess.run(
            ["docker", "compose", "ps", *flags, "--format", "{{.Service}}"],
            cwd=self.path, env=self.env, capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        return set(listed.stdout.split())


@pytest.fixture
def clone(tmp_path: Path) -> Iterator[Clone]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_")}
    env.pop("VIRTUAL_ENV", None)  # the reader's shell has the clone's own, made by `uv run`
    # The engine the session's tests use (make test provisions it; the engine is shared here).
    found = subprocess.run([str(ENGINE), "env"], env=env, capture_output=True, text=True)
    if found.returncode != 0:
        pytest.fail(f"no Docker engine answers: {found.stderr.strip()}", pytrace=False)
    env["DOCKER_HOST"] = found.stdout.strip().removeprefix("export DOCKER_HOST=")
    project = f"holdemtest{uuid.uuid4().hex[:8]}"
    env["COMPOSE_PROJECT_NAME"] = project
    env.update({name: str(port) for name, port in zip(PORTS, free_ports(len(PORTS)), strict=True)})
    path = tmp_path / "holdem"
    subprocess.run(
        ["git", "clone", "-q", str(REPO), str(path)], check=True, capture_output=True, timeout=300
    )
    try:
        yield Clone(path, env, project)
    finally:  # whatever the walk reached: the project's containers, volumes and images go
        subprocess.run(
            ["docker", "compose", "down", "--volumes", "--remove-orphans", "--rmi", "local"],
            cwd=path, env=env, capture_output=True, timeout=300, check=False,
        )  # fmt: skip


def test_the_page_walked_in_a_fresh_clone_as_written(clone: Clone) -> None:
    on_page = page_commands(PAGE.read_text())
    assert set(on_page) >= WALKED, "the page changed: see the test above"

    # make up: the engine, the images, the secrets, then up --wait and the operator's env file.
    up = clone.run(UP, timeout=UP_TIMEOUT_S + 300)
    assert clone.containers() >= LONG_RUNNING, up[-3000:]
    operator_env = clone.path / "deploy" / "compose" / ".secrets" / "operator.env"
    assert operator_env.stat().st_mode & 0o077 == 0, oct(operator_env.stat().st_mode)
    assert f"HOLDEM_KAFKA_BOOTSTRAP=127.0.0.1:{clone.env['HOLDEM_KAFKA_PORT']}" in (
        operator_env.read_text()
    )

    # A round as the operator: the page's two lines, in one shell as a reader types them.
    played = clone.run("\n".join(OPERATOR), timeout=900)
    assert re.search(r"^result (win|lose|push) returned \d+$", played, re.MULTILINE), played
    assert re.search(r"^balance \d+$", played, re.MULTILINE), played

    # The reader's own docker CLI on the engine make up used: it sees this stack.
    seen = clone.run(f"{DOCKER_CLI}\ndocker compose ps --format '{{{{.Service}}}}'", timeout=120)
    assert set(seen.split()) >= LONG_RUNNING, seen

    # make down: the stack and its volumes gone, the engine still up.
    clone.run(DOWN, timeout=300)
    assert clone.containers("--all") == set()
    assert engine_answers(clone.env)

    # make engine-down stops the dockerd this clone's make up started, and only it: none here,
    # since the engine was the session's, which must still answer.
    stopped = clone.run(ENGINE_DOWN, timeout=120)
    assert "no dockerd of" in stopped, stopped
    assert engine_answers(clone.env), "make engine-down in the clone stopped an engine not its own"
