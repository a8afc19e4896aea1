"""deploy/docker/stack.sh up's own steps (issue 30 item 1), against a stand-in `docker` that
records what it is asked: a taken host port stops the run before any engine or build and names
the variable to set; a failed `compose up` takes the half-started stack down; a good one writes
the operator's env file and removes the images the rebuild left dangling."""

from __future__ import annotations

import os
import socket
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.compose import HOST_PORT_VARS

REPO = Path(__file__).resolve().parents[2]
STACK = REPO / "deploy" / "docker" / "stack.sh"
PORT_VARS = HOST_PORT_VARS
# `docker`: every call appended to $CALLS; an engine answers; `compose up` exits $UP_EXIT.
# `dockerd` and `apt-get`: must never run here (the test fails on their line in $CALLS).
FAKE_DOCKER = """#!/usr/bin/env bash
echo "docker $*" >>"$CALLS"
case "$1 ${2:-}" in
    "compose up") exit "${UP_EXIT:-0}" ;;
    "version "*) echo 20.10.24 ;;
esac
exit 0
"""
NEVER = '#!/usr/bin/env bash\necho "$(basename "$0") $*" >>"$CALLS"\nexit 1\n'


@pytest.fixture
def held_ports() -> Iterator[dict[str, socket.socket]]:
    """A listening socket on each published port's variable, on every interface as `make serve`
    bound its metrics (closed after the test)."""
    held: dict[str, socket.socket] = {}
    try:
        for var in PORT_VARS:
            s = socket.socket()
            s.bind(("0.0.0.0", 0))
            s.listen()
            held[var] = s
        yield held
    finally:
        for s in held.values():
            s.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_up(tmp_path: Path, ports: dict[str, int], **env: str) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, text in (("docker", FAKE_DOCKER), ("dockerd", NEVER), ("apt-get", NEVER)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(stat.S_IRWXU)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("HOLDEM_", "DOCKER_"))}
    return subprocess.run(
        [str(STACK), "up"],
        env={
            **base,
            "PATH": f"{bin_dir}:{base['PATH']}",
            "CALLS": str(tmp_path / "calls"),
            "DOCKER_HOST": "unix:///nonexistent/stand-in.sock",
            "DOCKER_CONFIG": str(tmp_path / "docker-config"),
            "HOLDEM_ENGINE_DIR": str(tmp_path / "engine"),
            "HOLDEM_SECRETS_DIR": str(tmp_path / "secrets"),
            "HOLDEM_PYTHON_IMAGE": "python:stand-in",
            "HOLDEM_KAFKA_IMAGE": "kafka:stand-in",
            "HOLDEM_PROMETHEUS_IMAGE": "prometheus:stand-in",
            "HOLDEM_POSTGRES_IMAGE": "postgres:stand-in",
            "COMPOSE_PROJECT_NAME": "holdemtest-stack-script",
            **{var: str(port) for var, port in ports.items()},
            **env,
        },
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def calls(tmp_path: Path) -> list[str]:
    path = tmp_path / "calls"
    return path.read_text().splitlines() if path.exists() else []


def test_a_taken_port_stops_up_before_any_engine_or_build_and_names_its_variable(
    tmp_path: Path, held_ports: dict[str, socket.socket]
) -> None:
    taken = held_ports["HOLDEM_DEALER_METRICS_PORT"].getsockname()[1]
    ports = {var: free_port() for var in PORT_VARS} | {"HOLDEM_DEALER_METRICS_PORT": taken}

    done = run_up(tmp_path, ports)

    assert done.returncode != 0
    assert f"HOLDEM_DEALER_METRICS_PORT={taken}" in done.stderr, done.stderr
    for var, port in ports.items():  # only the taken one is named
        assert (f"{var}={port}" in done.stderr) == (port == taken), done.stderr
    made = calls(tmp_path)
    assert not [c for c in made if c.startswith(("docker compose", "dockerd", "apt-get"))], made


def test_every_taken_port_is_named_at_once(
    tmp_path: Path, held_ports: dict[str, socket.socket]
) -> None:
    ports = {var: s.getsockname()[1] for var, s in held_ports.items()}

    done = run_up(tmp_path, ports)

    assert done.returncode != 0
    assert all(f"{var}={port}" in done.stderr for var, port in ports.items()), done.stderr
    assert not [c for c in calls(tmp_path) if c.startswith("docker compose")], calls(tmp_path)


def test_a_failed_up_takes_the_half_started_stack_down_again(tmp_path: Path) -> None:
    done = run_up(tmp_path, {var: free_port() for var in PORT_VARS}, UP_EXIT="1")

    assert done.returncode != 0
    made = calls(tmp_path)
    ups = [i for i, c in enumerate(made) if c.startswith("docker compose up")]
    downs = [i for i, c in enumerate(made) if c.startswith("docker compose down")]
    assert ups and downs and downs[-1] > ups[-1], made
    assert not (tmp_path / "secrets" / "operator.env").exists()


def test_a_good_up_writes_the_operator_env_file_and_prunes_dangling_images(
    tmp_path: Path,
) -> None:
    ports = {var: free_port() for var in PORT_VARS}
    done = run_up(tmp_path, ports, HOLDEM_OPERATOR_PASSWORD="op-secret")

    assert done.returncode == 0, done.stderr
    env_file = tmp_path / "secrets" / "operator.env"
    lines = dict(line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line)
    assert lines == {
        "HOLDEM_KAFKA_BOOTSTRAP": f"127.0.0.1:{ports['HOLDEM_KAFKA_PORT']}",
        "HOLDEM_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
        "HOLDEM_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
        "HOLDEM_KAFKA_SASL_USERNAME": "operator",
        "HOLDEM_KAFKA_SASL_PASSWORD": "op-secret",
    }
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    assert str(env_file) in done.stderr  # the run says where it is
    assert any(c.startswith("docker image prune") for c in calls(tmp_path)), calls(tmp_path)
