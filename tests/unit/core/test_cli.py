"""``holdem``'s subcommands come from the installed packages' entry points, not from a table of
module names in the core; run as a process, as an operator runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from holdem.core.cli import GROUP, subcommands

SAMPLE = (
    Path(__file__).resolve().parents[3] / "shared" / "core" / "examples" / "settle-sample.jsonl"
)
EVERY_PACKAGE = {
    "settle": "holdem-core",
    "certify": "holdem-core",
    "rtp": "holdem-math",
    "ev": "holdem-math",
    "sim": "holdem-math",
    "play": "holdem-client",
    "history": "holdem-client",
    "round": "holdem-client",
    "end-session": "holdem-client",
    "audit": "holdem-harness",
    "rng-report": "holdem-lab",
}


def holdem(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "holdem.core.cli", *args],
        input=stdin, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_each_package_brings_its_subcommands_through_the_entry_point_group() -> None:
    found = subcommands()
    assert {name: e.dist.name for name, e in found.items() if e.dist} == EVERY_PACKAGE
    assert all(e.group == GROUP and ":" in e.value for e in found.values())
    source = (
        Path(__file__).resolve().parents[3] / "shared/core/src/holdem/core/cli.py"
    ).read_text()
    assert "importlib.import_module" not in source and "holdem.math" not in source


def test_help_lists_every_installed_subcommand_with_its_package() -> None:
    done = holdem("--help")
    assert done.returncode == 0, done.stderr
    for name, package in EVERY_PACKAGE.items():
        assert any(line.split() == [name, package] for line in done.stdout.splitlines()), name


def test_an_unknown_command_is_refused_with_the_list() -> None:
    done = holdem("no-such-command")
    assert done.returncode == 2
    assert "no command 'no-such-command'" in done.stdout and "settle" in done.stdout


def test_settle_runs_through_its_entry_point() -> None:
    lines = SAMPLE.read_text().splitlines()
    done = holdem("settle", stdin=SAMPLE.read_text())
    assert done.returncode == 0, done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert len(out) == len([line for line in lines if line.strip()])
    for row in out:  # the sample's expected settlements, paid by the core's rules
        assert {k: row["outcome"][k] for k in row["expect"]} == row["expect"], row["case"]
