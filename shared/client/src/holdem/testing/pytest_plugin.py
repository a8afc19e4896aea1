"""A pytest fixture for ``holdem.testing``: ``holdem_stack``, the whole stack in containers,
started once per test session (``pytest_plugins = ["holdem.testing.pytest_plugin"]`` in a
conftest.py). Where the release lives: ``--holdem-stack-dir`` or ``HOLDEM_STACK_DIR``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from holdem.testing import Stack
from holdem.testing import holdem_stack as _holdem_stack


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--holdem-stack-dir",
        default=None,
        help="the Casino Hold'em release folder (its docker-compose.yml); default HOLDEM_STACK_DIR",
    )


@pytest.fixture(scope="session")
def holdem_stack(request: pytest.FixtureRequest) -> Iterator[Stack]:
    """The stack, up for the session (a failure to start it fails the tests, never skips)."""
    with _holdem_stack(request.config.getoption("--holdem-stack-dir")) as stack:
        yield stack
