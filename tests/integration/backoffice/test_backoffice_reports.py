"""Statements, exports and reconciliation on real PostgreSQL with synthetic rounds."""

from __future__ import annotations

import csv
import io
import json
from datetime import date
from pathlib import Path

import pytest
from support.bo_web import fill

from holdem.backoffice import cli, db, reports

pytestmark = pytest.mark.postgres

DAY = date(2026, 11, 30)


def test_the_statement_adds_up_to_the_rounds_and_movements(dsn: str) -> None:
    fill(dsn, "op-a", 80, players=7)
    with db.connect(dsn) as conn:
        [line] = reports.statement(conn, "op-a", DAY)
        moves = reports.movements(conn, "op-a", DAY)
        settled = conn.execute(
            "SELECT sum(total_bet), sum(total_return), count(*) FROM rounds"
            " WHERE status = 'settled'"
        ).fetchone()
    assert settled is not None
    assert (line.rounds, line.players, line.voided) == (80, 7, 2)
    assert line.stakes == settled[0] and line.cash_paid == settled[1]
    assert line.settled == settled[2] and line.promo_stakes == line.promo_credits == 0
    assert line.ggr == line.stakes - line.cash_paid == line.ngr
    assert line.refunds == sum(m["amount"] for m in moves if m["kind"] == "refund") > 0
    voided = {m["round_id"] for m in moves if m["kind"] == "refund"}
    taken = [m for m in moves if m["kind"] in ("stake", "call_captured")]
    assert line.stakes == sum(m["amount"] for m in taken if m["round_id"] not in voided)


def test_reconciliation_prints_every_difference_and_fails_on_any(
    dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(dsn, "op-a", 20)
    monkeypatch.setenv("HOLDEM_BACKOFFICE_DSN", dsn)
    theirs = tmp_path / "operator.csv"
    assert cli.main(["movements", "--operator", "op-a", "--day", DAY.isoformat()]) == 0
    exported = capsys.readouterr().out
    theirs.write_text(exported)
    assert cli.main(["reconcile", str(theirs), "--operator", "op-a"]) == 0
    rows = list(csv.DictReader(io.StringIO(exported)))
    changed, dropped = rows[3], rows[5]
    changed["amount"] = str(int(changed["amount"]) + 1)
    extra = {**rows[0], "tx_id": "deposit:theirs-only"}
    kept = [r for r in rows if r is not dropped] + [extra]
    with theirs.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(kept)
    assert cli.main(["reconcile", str(theirs), "--operator", "op-a"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3, out
    assert any(f"{changed['tx_id']}: amount ours" in line for line in out)
    assert any(dropped["tx_id"] in line and "missing at the operator" in line for line in out)
    assert any("theirs-only" in line and "not ours" in line for line in out)


def test_the_statement_exports_as_csv_and_json_with_the_same_figures(
    dsn: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(dsn, "op-a", 30)
    monkeypatch.setenv("HOLDEM_BACKOFFICE_DSN", dsn)
    args = ["statement", "--operator", "op-a", "--day", DAY.isoformat()]
    assert cli.main([*args, "--format", "json"]) == 0
    [as_json] = json.loads(capsys.readouterr().out)
    assert cli.main([*args, "--format", "csv"]) == 0
    [as_csv] = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    for key in ("rounds", "stakes", "cash_paid", "ggr", "ngr", "refunds", "promotion_cost"):
        assert str(as_json[key]) == as_csv[key], key
    assert as_json["ggr"] == as_json["stakes"] - as_json["cash_paid"]
