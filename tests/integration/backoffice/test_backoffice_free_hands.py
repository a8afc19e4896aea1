"""Issue 29 defect 7: free hands and promotional credits in the statement, the exports and the
pages: cash stakes, promotion stakes, cash paid, promotion cost, GGR and NGR apart, and the
statement equal to the movements export to the cent."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Iterator
from datetime import date

import pytest
import requests
from support.bo_web import fill, running_web

from holdem.backoffice import cli, db, reports
from holdem.backoffice.auth import add_user

pytestmark = pytest.mark.postgres

DAY = date(2026, 11, 30)
CREDIT = 2500  # each player's promotional credit


@pytest.fixture
def filled(dsn: str) -> str:
    fill(dsn, "op-a", 60, players=4, free_every=3, credits=CREDIT, voids_every=10)
    return dsn


def test_the_statement_equals_the_movements_export_to_the_cent(
    filled: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOLDEM_BACKOFFICE_DSN", filled)
    assert cli.main(["movements", "--operator", "op-a", "--day", DAY.isoformat()]) == 0
    moves = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert cli.main(["statement", "--operator", "op-a", "--day", DAY.isoformat()]) == 0
    lines = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    total: Counter[str] = Counter()
    for move in moves:
        total[move["kind"]] += int(move["amount"])
    free = {m["round_id"] for m in moves if m["kind"] == "free_stake"}
    assert free and total["promo_credit"] == 4 * CREDIT
    assert all(m["campaign_id"] == "op-a-welcome" for m in moves if m["round_id"] in free)
    figures = {key: sum(int(line[key]) for line in lines) for key in lines[0] if key in (
        "cash_stakes", "promo_stakes", "cash_paid", "refunds", "promo_credits", "stakes",
        "promotion_cost", "ggr", "ngr", "free_hands",
    )}  # fmt: skip
    # a voided round's stakes come back (refund, free_stake_refund): only settled ones count
    assert figures["cash_stakes"] == total["stake"] + total["call_captured"] - total["refund"]
    assert figures["promo_stakes"] == total["free_stake"] - total["free_stake_refund"] > 0
    assert figures["cash_paid"] == total["payout"]
    assert figures["refunds"] == total["refund"]
    assert figures["promo_credits"] == total["promo_credit"]
    assert figures["stakes"] == figures["cash_stakes"] + figures["promo_stakes"]
    assert figures["ggr"] == figures["stakes"] - total["payout"]
    assert figures["promotion_cost"] == figures["promo_stakes"] + total["promo_credit"]
    # NGR: what the operator kept of the players' own money, after paying the promotions
    assert figures["ngr"] == (
        total["stake"] + total["call_captured"] - total["refund"] - total["payout"]
        - total["promo_credit"]
    )  # fmt: skip
    assert figures["free_hands"] == len(free) - 2  # rounds 29 and 59 are voided free hands


def test_a_free_hands_page_shows_what_the_player_put_in_and_got(filled: str) -> None:
    with db.connect(filled) as conn:
        add_user(conn, "sue", "pw", "support", "op-a")
        won = conn.execute(
            "SELECT m.player_id, m.round_id, p.amount FROM movements m"
            " JOIN movements p ON p.operator_id = m.operator_id AND p.player_id = m.player_id"
            " AND p.round_id = m.round_id AND p.kind = 'payout'"
            " JOIN rounds r ON r.operator_id = m.operator_id AND r.player_id = m.player_id"
            " AND r.round_id = m.round_id WHERE m.kind = 'free_stake' AND r.decision = 'call'"
            " ORDER BY p.amount DESC LIMIT 1"
        ).fetchone()
    assert won is not None
    player, round_id, paid = won
    with running_web(filled) as url:
        sue = requests.Session()
        sue.post(f"{url}/login", data={"username": "sue", "password": "pw"})
        detail = sue.get(f"{url}/rounds/{player}/{round_id}.json").json()["round"]
        listed = sue.get(f"{url}/players/{player}.json").json()["rounds"]
        page = sue.get(f"{url}/rounds/{player}/{round_id}").text
    assert detail["campaign_id"] == "op-a-welcome"
    assert detail["cash_stake"] == detail["call_amount"] == 2 * detail["ante"]
    assert detail["promo_stake"] == detail["ante"] + detail["aa_bonus"]
    assert detail["cash_paid"] == paid == sum(b["paid"] for b in detail["bets"])
    assert {b["bet_type"]: b["funded_by"] for b in detail["bets"]} == {
        "ante": "promotion", "aa_bonus": "promotion", "call": "player"
    }  # fmt: skip
    assert detail["balance_after"] - detail["balance_before"] == paid - detail["cash_stake"]
    [row] = [r for r in listed if r["round_id"] == round_id]
    assert (row["cash_stake"], row["promo_stake"], row["cash_paid"], row["campaign_id"]) == (
        detail["cash_stake"], detail["promo_stake"], paid, "op-a-welcome"
    )  # fmt: skip
    assert "op-a-welcome" in page


def test_a_paid_round_is_unchanged(filled: str) -> None:
    with db.connect(filled) as conn:
        [line] = [line for line in reports.statement(conn, "op-a", DAY) if line.table_id == ""]
        plain = conn.execute(
            "SELECT sum(total_bet), sum(total_return) FROM rounds r WHERE status = 'settled'"
            " AND NOT EXISTS (SELECT 1 FROM movements m WHERE m.operator_id = r.operator_id"
            " AND m.player_id = r.player_id AND m.round_id = r.round_id"
            " AND m.kind = 'free_stake')"
        ).fetchone()
        paid_by_player = conn.execute(
            "SELECT sum(call_amount) FROM rounds r WHERE status = 'settled' AND EXISTS"
            " (SELECT 1 FROM movements m WHERE m.operator_id = r.operator_id"
            " AND m.player_id = r.player_id AND m.round_id = r.round_id"
            " AND m.kind = 'free_stake')"
        ).fetchone()
    assert plain is not None and paid_by_player is not None
    assert line.cash_stakes == plain[0] + paid_by_player[0]


@pytest.fixture
def fin(filled: str) -> Iterator[tuple[str, requests.Session]]:
    with db.connect(filled) as conn:
        add_user(conn, "fin", "pw", "finance", "op-a")
    with running_web(filled) as url:
        session = requests.Session()
        session.post(f"{url}/login", data={"username": "fin", "password": "pw"})
        yield url, session


def test_the_statement_page_and_its_exports_show_the_same_columns(
    fin: tuple[str, requests.Session],
) -> None:
    url, session = fin
    page = session.get(f"{url}/statements?day={DAY}").text
    [line] = session.get(f"{url}/statements.json?day={DAY}").json()["lines"]
    exported = list(csv.DictReader(io.StringIO(
        session.get(f"{url}/exports/statement.csv?day={DAY}").text
    )))  # fmt: skip
    for key in ("cash_stakes", "promo_stakes", "cash_paid", "promotion_cost", "ggr", "ngr"):
        assert str(line[key]) == exported[0][key], key
        assert f'id="{key}"' in page or f'class="{key}' in page, key
