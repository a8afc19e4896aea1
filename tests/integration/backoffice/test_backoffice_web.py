"""The web back office on real PostgreSQL: login, roles, tenant isolation, the round page's
cards and verified commitment, JSON beside HTML, the search log."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
from support.bo_web import fill, running_web

from holdem.backoffice import db
from holdem.backoffice.auth import add_user

pytestmark = pytest.mark.postgres

PASSWORD = "correct horse"


@pytest.fixture
def site(dsn: str) -> Iterator[str]:
    fill(dsn, "op-a", 30)
    fill(dsn, "op-b", 10, seed=2)
    with db.connect(dsn) as conn:
        for name, role, operator in (
            ("sue", "support", "op-a"), ("fin", "finance", "op-a"),
            ("reg", "regulator", "op-a"), ("bob", "support", "op-b"),
        ):  # fmt: skip
            add_user(conn, name, PASSWORD, role, operator)  # type: ignore[arg-type]
    with running_web(dsn) as url:
        yield url


def login(url: str, user: str, password: str = PASSWORD) -> requests.Session:
    session = requests.Session()
    answer = session.post(f"{url}/login", data={"username": user, "password": password})
    assert answer.ok, answer.text
    return session


def test_pages_need_a_login_and_a_wrong_password_gets_none(site: str) -> None:
    answer = requests.get(f"{site}/rounds", allow_redirects=False)
    assert answer.status_code == 303 and answer.headers["location"].startswith("/login")
    failed = login(site, "sue", "wrong")
    assert "login failed" in failed.get(f"{site}/login").text or not failed.cookies
    assert failed.get(f"{site}/rounds", allow_redirects=False).status_code == 303


def test_each_role_opens_only_its_pages(site: str) -> None:
    sue, fin, reg = login(site, "sue"), login(site, "fin"), login(site, "reg")
    assert sue.get(f"{site}/rounds?player=sp00001").ok
    assert sue.get(f"{site}/statements?day=2026-11-30").status_code == 403
    assert sue.get(f"{site}/exports/statement.csv?day=2026-11-30").status_code == 403
    assert fin.get(f"{site}/statements?day=2026-11-30").ok
    assert fin.get(f"{site}/rounds?player=sp00001").status_code == 403
    for page in ("rounds?player=sp00001", "statements?day=2026-11-30", "flagged",
                 "exports/movements.json?day=2026-11-30"):  # fmt: skip
        assert reg.get(f"{site}/{page}").ok, page


def test_a_user_never_sees_another_operators_rounds(site: str) -> None:
    sue, bob = login(site, "sue"), login(site, "bob")
    mine = sue.get(f"{site}/rounds.json?player=sp00001").json()["rounds"]
    assert mine
    theirs = bob.get(f"{site}/rounds.json?player=sp00001").json()["rounds"]
    assert {r["round_id"] for r in mine}.isdisjoint({r["round_id"] for r in theirs})
    one = mine[0]
    assert bob.get(f"{site}/rounds/{one['player_id']}/{one['round_id']}").status_code == 404
    assert sue.get(f"{site}/rounds/{one['player_id']}/{one['round_id']}").ok


def test_the_round_page_shows_the_cards_and_verifies_the_commitment(site: str, dsn: str) -> None:
    sue = login(site, "sue")
    found = sue.get(f"{site}/rounds.json?player=sp00002&outcome=win").json()["rounds"]
    one = found[0]
    page = sue.get(f"{site}/rounds/{one['player_id']}/{one['round_id']}?lang=nb").text
    assert "✔ verifisert" in page
    assert any(suit in page for suit in "♠♥♦♣")
    detail = sue.get(f"{site}/rounds/{one['player_id']}/{one['round_id']}.json").json()["round"]
    assert detail["verification"]["verified"] and detail["verification"]["result_matches"]
    assert detail["balance_after"] - detail["balance_before"] == (
        detail["total_return"] - detail["total_bet"]
    )
    with db.connect(dsn) as conn:
        logged = conn.execute(
            "SELECT page, player_id, round_id FROM search_log WHERE username = 'sue'"
        ).fetchall()
    assert ("round", one["player_id"], one["round_id"]) in logged
    assert ("rounds", "sp00002", None) in logged


def test_every_language_renders_the_round_page(site: str) -> None:
    sue = login(site, "sue")
    one = sue.get(f"{site}/rounds.json?player=sp00003").json()["rounds"][0]
    for lang, word in (("en", "Player"), ("bg", "Играч"), ("ro", "Jucător"), ("ms", "Pemain"),
                       ("nb", "Spiller")):  # fmt: skip
        page = sue.get(f"{site}/rounds/{one['player_id']}/{one['round_id']}?lang={lang}")
        assert page.ok and word in page.text, lang


def test_a_malformed_search_is_a_400_not_an_error(site: str) -> None:
    sue, fin = login(site, "sue"), login(site, "fin")
    assert sue.get(f"{site}/rounds?from=yesterday").status_code == 400
    assert fin.get(f"{site}/statements?day=13/13/2026").status_code == 400
