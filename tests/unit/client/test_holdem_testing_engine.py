"""holdem.testing drives the engine the release's stack.sh found when this process names none
(issue 30 item 2: it used to drop it and fail on the default socket), and the process's own
DOCKER_HOST when it names one. A stand-in `docker` records each compose command line."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from holdem.testing import StackError, holdem_stack

PROVISIONED = "unix:///provisioned/by/make-up/docker.sock"
FAKE_DOCKER = """#!/usr/bin/env bash
echo "$*" >>"$CALLS"
exit 1
"""
FAKE_STACK = f"""#!/usr/bin/env bash
[[ "$1" == env ]] || exit 2
echo "export DOCKER_HOST={PROVISIONED}"
echo "export HOLDEM_PYTHON_IMAGE=python:stand-in"
"""


@pytest.fixture
def release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "release"
    (folder / "deploy" / "docker").mkdir(parents=True)
    (folder / "docker-compose.yml").write_text("services: {}\n")
    (folder / "deploy" / "docker" / "stack.sh").write_text(FAKE_STACK)
    (folder / "deploy" / "docker" / "stack.sh").chmod(stat.S_IRWXU)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text(FAKE_DOCKER)
    (bin_dir / "docker").chmod(stat.S_IRWXU)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("CALLS", str(tmp_path / "calls"))
    return folder


def compose_calls(tmp_path: Path) -> list[str]:
    return [c for c in (tmp_path / "calls").read_text().splitlines() if " compose " in f" {c} "]


def test_without_docker_host_the_engine_stack_sh_found_is_used(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DOCKER_HOST", raising=False)

    with pytest.raises(StackError), holdem_stack(release):
        pass

    made = compose_calls(tmp_path)
    assert any(" up " in f" {c} " for c in made), made
    assert any(" down " in f" {c} " for c in made), made  # the failed up is taken down too
    assert all(c.startswith(f"--host {PROVISIONED} compose ") for c in made), made


def test_the_process_docker_host_wins_over_the_one_stack_sh_found(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///the/process/own.sock")

    with pytest.raises(StackError), holdem_stack(release):
        pass

    made = compose_calls(tmp_path)
    assert made and all(c.startswith("compose ") for c in made), made
