"""Issue 29 gap: promotions and protection in the back office. Campaigns, free hands granted
and played, promotional credits, limits, blocks and sessions are projected and shown (the
player page), and the promotions report's cost equals the statement's promotion cost."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
import requests
from support.bo_web import fill, running_web

from holdem.backoffice import db, reports, store
from holdem.backoffice.auth import add_user
from holdem.backoffice.rows import Batch, Where
from holdem.core import contracts as c
from holdem.core.contracts.protection import Limits

pytestmark = pytest.mark.postgres

DAY = date(2026, 11, 30)
CREDIT = 700


@pytest.fixture
def filled(dsn: str) -> str:
    fill(dsn, "op-a", 60, players=4, free_every=3, credits=CREDIT, voids_every=10)
    return dsn


def test_the_promotions_report_adds_up_to_the_statement(filled: str) -> None:
    with db.connect(filled) as conn:
        [line] = reports.promotions(conn, "op-a", DAY)
        statement = reports.statement(conn, "op-a", DAY)
    assert (line.campaign_id, line.currency) == ("op-a-welcome", "EUR")
    assert (line.players_granted, line.hands_granted, line.hands_given_up) == (4, 80, 0)
    assert line.free_hands_played == 18  # 20 free hands, 2 of them voided
    assert line.promo_stakes == sum(s.promo_stakes for s in statement) == 18 * 750
    assert line.promo_credits == 4 * CREDIT == sum(s.promo_credits for s in statement)
    assert line.cost == sum(s.promotion_cost for s in statement)


def test_protection_and_campaign_events_are_projected_and_on_the_player_page(
    filled: str,
) -> None:
    at = datetime(2026, 11, 30, 23, tzinfo=UTC)
    events: list[Any] = [
        c.LimitsSet(event_id="lim-1", player_id="sp00001", occurred_at=at, command_id="l1",
                    limits=Limits(currency="EUR", loss_per_day=10_000)),
        c.PlayerBlocked(event_id="blk-1", player_id="sp00001", occurred_at=at,
                        command_id="b1", reason="self-exclusion"),
        c.FreeHandsCancelled(event_id="cnl-1", player_id="sp00001", occurred_at=at,
                             campaign_id="op-a-welcome", command_id="x1",
                             fingerprint="0" * 32, remaining=15),
    ]  # fmt: skip
    batch = Batch()
    for offset, event in enumerate(events):
        role = "rounds" if event.type.startswith("round.") else "wallet"
        batch.add(role, Where(f"op-a.holdem.{role}.x", 0, offset, "op-a", "b1"), event)
    with db.connect(filled) as conn:
        store.write(conn, batch, {})
        add_user(conn, "sue", "pw", "support", "op-a")
        [line] = reports.promotions(conn, "op-a", DAY)
    assert line.hands_given_up == 15
    with running_web(filled) as url:
        sue = requests.Session()
        sue.post(f"{url}/login", data={"username": "sue", "password": "pw"})
        found = sue.get(f"{url}/players/sp00001.json").json()
        page = sue.get(f"{url}/players/sp00001").text
        assert sue.get(f"{url}/promotions").status_code == 403  # finance's report
    types = [e["type"] for e in found["events"]]
    assert {"wallet.limits_set", "round.player_blocked", "wallet.free_hands_cancelled",
            "wallet.free_hands_granted"} <= set(types)  # fmt: skip
    [blocked] = [e for e in found["events"] if e["type"] == "round.player_blocked"]
    assert blocked["detail"]["reason"] == "self-exclusion"
    [campaign] = found["campaigns"]
    assert campaign["campaign_id"] == "op-a-welcome" and campaign["credits"] == CREDIT
    assert campaign["played"] > 0 and campaign["stakes"] == campaign["played"] * 750
    assert "self-exclusion" in page and 'class="campaign"' in page


def test_finance_reads_and_exports_the_promotions_report(filled: str) -> None:
    with db.connect(filled) as conn:
        add_user(conn, "fin", "pw", "finance", "op-a")
    with running_web(filled) as url:
        fin = requests.Session()
        fin.post(f"{url}/login", data={"username": "fin", "password": "pw"})
        page = fin.get(f"{url}/promotions?day={DAY}")
        [line] = fin.get(f"{url}/promotions.json?day={DAY}").json()["lines"]
        exported = fin.get(f"{url}/exports/promotions.csv?day={DAY}")
    assert page.ok and 'class="promotion"' in page.text
    assert line["promotion_cost"] == 18 * 750 + 4 * CREDIT
    assert exported.ok and f",{line['promotion_cost']}" in exported.text
