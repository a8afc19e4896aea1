"""holdem.testing as an operator uses it (issue 17 item 5b, issue 30 items 2-3): the guide's
integration test, copied into a folder outside the repository and run by pytest from a virtual
environment holding only the published package (holdem-client[testing], built here), starts our
whole stack in containers through the fixture on the engine stack.sh finds, and plays rounds
against it as the operator principal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.compose import REPO, UP_TIMEOUT_S, engine_answers

pytestmark = [pytest.mark.containers, pytest.mark.timeout(UP_TIMEOUT_S + 600)]

EXAMPLE = REPO / "examples" / "integration" / "test_operator_integration.py"


def test_the_guide_shows_the_integration_test_verbatim() -> None:
    guide = (REPO / "docs" / "containers.md").read_text()
    assert f"```python\n{EXAMPLE.read_text()}```" in guide


def install_published_package(where: Path) -> Path:
    """A virtual environment in ``where`` with holdem-client[testing] from the wheels built from
    this checkout (and their dependencies from the index): what an operator installs."""
    dist = where / "dist"
    for package in ("holdem-core", "holdem-client"):
        subprocess.run(
            ["uv", "build", "--wheel", "--package", package, "--out-dir", str(dist), "-q"],
            cwd=REPO, check=True, capture_output=True, timeout=600,
        )  # fmt: skip
    venv = where / "venv"
    subprocess.run(
        ["uv", "venv", "-q", "--python", sys.executable, str(venv)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (core,) = dist.glob("holdem_core-*.whl")
    (client,) = dist.glob("holdem_client-*.whl")
    subprocess.run(
        ["uv", "pip", "install", "-q", str(core), f"{client}[testing]"],
        env={**os.environ, "VIRTUAL_ENV": str(venv)},
        check=True, capture_output=True, timeout=600,
    )  # fmt: skip
    return venv / "bin" / "python"


def test_the_integration_test_passes_from_an_operators_folder_with_the_package_alone(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_")}
    assert engine_answers(env), "no Docker engine answers (make test provisions one)"
    # No DOCKER_HOST where stack.sh's lookup finds the engine by itself (this clone's dockerd,
    # the default socket): holdem.testing must find it so too (issue 30 item 2).
    alone = {k: v for k, v in env.items() if k != "DOCKER_HOST"}
    if engine_answers(alone):
        env = alone
    python = install_published_package(tmp_path)
    # The operator's own folder: the example as the guide shows it, no pytest.ini, no conftest.
    folder = tmp_path / "operator-tests"
    folder.mkdir()
    (folder / EXAMPLE.name).write_text(EXAMPLE.read_text())
    done = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", EXAMPLE.name],
        cwd=folder,
        env={**env, "HOLDEM_STACK_DIR": str(REPO)},
        capture_output=True,
        text=True,
        timeout=UP_TIMEOUT_S + 300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout, done.stdout[-2000:]
