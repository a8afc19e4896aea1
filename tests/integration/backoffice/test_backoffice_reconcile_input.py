"""Issue 29 defect 11: ``holdem-backoffice reconcile`` tells an unreadable file (exit 2, one
clear line on stderr, no traceback) from a file that differs from our movements (exit 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from holdem.backoffice import cli

pytestmark = pytest.mark.postgres

HEADER = "tx_id,player_id,kind,amount,currency,round_id\n"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (HEADER + "deposit:a,p1,deposit,100,EUR,\ndeposit:a,p1,deposit,100,EUR,\n", "listed twice"),
        ("tx_id,player_id,kind,currency\ndeposit:a,p1,deposit,EUR\n", "no column amount"),
        (HEADER + "deposit:a,p1,deposit,12.50,EUR,\n", "'12.50' is not minor units"),
        (HEADER + "deposit:a,p1,deposit,,EUR,\n", "is not minor units"),
        ("", "no column"),
    ],
)
def test_an_unreadable_operator_file_exits_2_with_one_clear_line(
    dsn: str, tmp_path: Path, body: str, expected: str,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("HOLDEM_BACKOFFICE_DSN", dsn)
    theirs = tmp_path / "operator.csv"
    theirs.write_text(body)
    assert cli.main(["reconcile", str(theirs), "--operator", "op-a"]) == cli.EXIT_INPUT
    out, err = capsys.readouterr()
    assert out == ""
    assert expected in err and "Traceback" not in err
    assert err.startswith("holdem-backoffice reconcile: ") and err.count("\n") == 1


def test_a_missing_or_binary_file_is_an_input_error_too(
    dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOLDEM_BACKOFFICE_DSN", dsn)
    assert cli.main(["reconcile", str(tmp_path / "nope.csv"), "--operator", "op-a"]) == 2
    assert "nope.csv" in capsys.readouterr().err
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\xff\xfe\x00tx_id")
    assert cli.main(["reconcile", str(binary), "--operator", "op-a"]) == 2
    assert "UTF-8" in capsys.readouterr().err


def test_differences_still_exit_1_and_agreement_0(
    dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOLDEM_BACKOFFICE_DSN", dsn)
    theirs = tmp_path / "operator.csv"
    theirs.write_text(HEADER)
    assert cli.main(["reconcile", str(theirs), "--operator", "op-a"]) == 0
    theirs.write_text(HEADER + "deposit:a,p1,deposit,100,EUR,\n")
    assert cli.main(["reconcile", str(theirs), "--operator", "op-a"]) == cli.EXIT_DIFFERENCES == 1
    assert "the operator's, not ours" in capsys.readouterr().out
