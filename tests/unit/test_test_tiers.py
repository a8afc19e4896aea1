"""The test tiers hold (issue 27 item 7): `make check` deselects every marker that needs a
broker, a database, a browser, Docker or minutes of CPU, and a test that uses the broker's or the
database's fixture without its marker is refused at collection."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.tiers import NEEDS_MARKER, unmarked

REPO = Path(__file__).resolve().parents[2]
# Every marker registered in pyproject says what a test needs beyond Python (a broker, PostgreSQL,
# a browser, Docker, minutes of CPU): `make check` leaves out each of them.
REGISTERED = {
    line.split(":")[0]
    for line in tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"
    ]["markers"]
}


def make_variable(name: str) -> str:
    found = re.search(rf"^{name} = (.*)$", (REPO / "Makefile").read_text(), re.M)
    assert found, f"{name} not in the Makefile"
    return found.group(1)


def test_make_check_deselects_every_registered_marker_and_runs_the_fast_folders() -> None:
    marks = make_variable("CHECK_MARKS")
    left_out = set(re.findall(r"not (\w+)", marks))
    assert left_out == REGISTERED, (left_out, REGISTERED)
    assert make_variable("CHECK_TESTS").split() == ["tests/unit", "tests/property", "tests/service"]


def test_the_fixtures_that_start_a_service_have_registered_markers() -> None:
    assert set(NEEDS_MARKER.values()) <= REGISTERED


@dataclass
class Item:
    nodeid: str
    fixturenames: tuple[str, ...]
    markers: set[str] = field(default_factory=set)

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


@pytest.mark.parametrize("fixture", sorted(NEEDS_MARKER))
def test_a_test_using_the_fixture_without_its_marker_is_named(fixture: str) -> None:
    bare = Item("t.py::bare", (fixture, "tmp_path"))
    marked = Item("t.py::marked", (fixture,), {NEEDS_MARKER[fixture]})
    other = Item("t.py::other", ("tmp_path",))
    assert unmarked([bare, marked, other]) == [
        f"t.py::bare uses the {fixture} fixture without the {NEEDS_MARKER[fixture]} marker"
    ]
