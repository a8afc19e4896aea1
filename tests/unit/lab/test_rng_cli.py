"""`holdem rng-report` end to end at a tiny N: dispatch from the core CLI, tallies, re-render."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from holdem.core.cli import main


def test_the_core_cli_dispatches_rng_report(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["rng-report", "--help"])
    assert exc.value.code == 0
    assert "--shuffles" in capsys.readouterr().out


def test_importing_the_core_cli_does_not_import_the_lab() -> None:
    code = (
        "import sys, holdem.core.cli; print(any(m.startswith('holdem.lab') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_tiny_run_writes_the_report_and_renders_again_from_its_tallies(tmp_path: Path) -> None:
    first, again = tmp_path / "run", tmp_path / "again"
    # The verdict of a real draw is random: a fair shuffle FAILs at the family-wise 0.01 about
    # once in a hundred runs, so this test asks only that the exit code tells the report's
    # verdict (the statistics' own error rate is tested over 20 runs, tests/unit/lab, slow).
    code = main(["rng-report", "--shuffles", "300", "--nist-bits", "0", "--out", str(first)])
    meta = json.loads((first / "counts.json").read_text())
    assert meta["shuffles"] == 300 and meta["complete"] is True and "openssl" in meta
    report = (first / "report.md").read_text()
    assert "| shuffles | 300 |" in report
    assert code == (0 if "PASS: no test rejects a fair shuffle" in report else 1)
    argv = ["rng-report", "--counts", str(first / "counts.npz"), "--nist-bits", "0"]
    assert main([*argv, "--out", str(again)]) == code  # the same tallies, the same verdict
    assert (again / "report.html").exists()
