"""holdem.testing as an operator uses it (issue 17 item 5b): the operator guide's integration
test, run as written by pytest in its own process, starts our whole stack in containers through
the fixture and plays a round against it as the operator principal."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support.compose import REPO, UP_TIMEOUT_S, engine_answers

pytestmark = [pytest.mark.containers, pytest.mark.timeout(UP_TIMEOUT_S + 600)]

EXAMPLE = REPO / "examples" / "integration" / "test_operator_integration.py"


def test_the_operator_guide_shows_the_integration_test_verbatim() -> None:
    guide = (REPO / "docs" / "operator-guide.md").read_text()
    assert f"```python\n{EXAMPLE.read_text()}```" in guide


def test_the_integration_test_passes_against_the_stack_in_containers() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_")}
    assert engine_answers(env), "no Docker engine answers (make test provisions one)"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", EXAMPLE.name],
        cwd=EXAMPLE.parent,
        env={**env, "HOLDEM_STACK_DIR": str(REPO)},
        capture_output=True,
        text=True,
        timeout=UP_TIMEOUT_S + 300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout, done.stdout[-2000:]
