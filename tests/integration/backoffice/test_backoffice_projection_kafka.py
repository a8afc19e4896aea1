"""The projection on real Kafka and PostgreSQL, after one run of the game: killed -9 under load
and started again, it ends with the audit's row counts and money totals to the minor unit;
the day's statement gives the audit's figures; a real browser (Debian's chromium) finds the
run's player, replays a round with its verified commitment and downloads the statement."""

from __future__ import annotations

import asyncio
import csv
import io
import os
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from support.backoffice import (
    ProjectionProcess,
    audit_figures,
    caught_up,
    database_figures,
    end_offsets,
)
from support.bo_web import running_web
from support.kafka import Cluster
from support.postgres import Postgres
from support.stack import Stack

from holdem.backoffice import db, reports
from holdem.backoffice.auth import add_user
from holdem.client import Operator, Player
from holdem.core.contracts import TableTerms
from holdem.core.strategy import STRATEGIES
from holdem.core.wire.topics import Topics
from holdem.harness.audit import AuditReport, Record, check, read_run
from holdem.harness.load import Plan, fund, play

pytestmark = [pytest.mark.kafka, pytest.mark.postgres]
KILLS = 3
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run"]  # fmt: skip
# Set to a folder (e.g. docs/backoffice) to keep the browser's screenshots there.
SCREENSHOTS = os.environ.get("HOLDEM_BACKOFFICE_SCREENSHOTS")


@dataclass(frozen=True)
class Run:
    dsn: str
    operator: str
    records: list[Record]
    report: AuditReport
    rounds: int
    starts: int


@pytest.fixture(scope="module")
async def run(
    kafka: Cluster, postgres: Postgres, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Run]:
    """One game run under load with the projection killed -9 three times, then caught up."""
    dsn = postgres.create_database("bo_run")
    logs = tmp_path_factory.mktemp("projection")
    stack = Stack(kafka, Topics.unique("bo"))
    await stack.open()
    projection = ProjectionProcess(dsn, kafka.admin, stack.prefix, logs / "projection.log")
    try:
        projection.start()
        plan = Plan(rounds=240, players=8, voids=12, step_s=60)
        async with Operator(kafka.operator, stack.topics, stack.partitions, brand="b1") as client:
            await fund(client, plan)
            load = asyncio.create_task(play(client, plan, STRATEGIES["basic"]))
            for _ in range(KILLS):
                await asyncio.sleep(random.uniform(1.5, 3.0))
                assert projection.alive(), (logs / "projection.log").read_text()[-3000:]
                projection.kill()
                projection.start()
            tally = await asyncio.wait_for(load, 300)
            async with Operator(kafka.admin, stack.topics, stack.partitions) as admin:
                await at_a_table(admin, client, stack.prefix)
        assert not tally.stalled, tally.stalled
        records = await read_run(kafka.admin, stack.topics)
        report = check(records)
        assert report.ok, report.violations[:20]
        await caught_up(dsn, await end_offsets(kafka.admin, stack.topics, stack.partitions))
        yield Run(
            dsn, stack.prefix, records, report, tally.rounds + TABLE_ROUNDS, projection.starts
        )
    finally:
        projection.stop()
        await stack.close()


TABLE_ROUNDS = 4


async def at_a_table(admin: Operator, client: Operator, operator: str) -> None:
    """Two players at a table made by the admin (v2 bets, sessions), one session ended."""
    terms = TableTerms(operator_id=operator, currency="EUR", ante_min=100, ante_max=10_000,
                       bonus_max=5_000, chips=(250, 500))  # fmt: skip
    await admin.create_table("bo-t1", terms)
    for name in ("tp-1", "tp-2"):
        player = Player(client, name, table_id="bo-t1")
        await player.deposit(100_000)
        for _ in range(TABLE_ROUNDS // 2):
            played = await player.bet(500, 250)
            await played.dealt()
            await played.call()
            await played.outcome()
            played.close()
    await Player(client, "tp-1", table_id="bo-t1").end_session()


def test_tables_and_sessions_are_projected(run: Run) -> None:
    with db.connect(run.dsn) as conn:
        versions = conn.execute("SELECT table_id, table_version, event FROM table_versions")
        assert versions.fetchall() == [("bo-t1", 1, "opened")]
        sessions = conn.execute("SELECT player_id, end_reason FROM sessions ORDER BY 1").fetchall()
        assert sessions == [("tp-1", "ended"), ("tp-2", None)]
        tabled = conn.execute(
            "SELECT count(*) FROM rounds WHERE table_id = 'bo-t1' AND table_version = 1"
            " AND session_id IS NOT NULL AND status = 'settled'"
        ).fetchone()
    assert tabled == (TABLE_ROUNDS,)


def test_a_projection_killed_under_load_ends_equal_to_the_audit(run: Run) -> None:
    expected, found = audit_figures(run.records), database_figures(run.dsn)
    print(f"\nprojection after {KILLS} kill -9: {found}")
    assert found == expected
    assert found["rounds"] == run.report.rounds == run.rounds > 0
    assert run.starts == KILLS + 1


def chromium_path() -> str:
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} missing: deploy/chromium/provision.sh installs it"
    return CHROMIUM


def days_of(dsn: str) -> list[date]:
    with db.connect(dsn) as conn:
        rows = conn.execute("SELECT DISTINCT (ended_at AT TIME ZONE 'UTC')::date FROM rounds")
        return sorted(day for (day,) in rows if day is not None)


def statement_totals(dsn: str, operator: str) -> dict[str, int]:
    totals = dict.fromkeys(
        ("rounds", "settled", "voided", "stakes", "cash_paid", "refunds", "ggr"), 0
    )
    with db.connect(dsn) as conn:
        for day in days_of(dsn):  # a run may cross midnight UTC: the days' statements add up
            for line in reports.statement(conn, operator, day):
                for key in totals:
                    totals[key] += int(line.as_dict()[key])
    return totals


def audit_statement(records: list[Record]) -> dict[str, int]:
    figures = audit_figures(records)
    return {
        "rounds": figures["settled"] + figures["voided"], "settled": figures["settled"],
        "voided": figures["voided"], "stakes": figures["stakes"], "cash_paid": figures["returns"],
        "refunds": figures["movement_amounts"].get("wallet.stakes_refunded", 0),
        "ggr": figures["stakes"] - figures["returns"],
    }  # fmt: skip


def test_the_days_statement_equals_the_audits_figures(run: Run) -> None:
    assert statement_totals(run.dsn, run.operator) == audit_statement(run.records)


@pytest.mark.browser
async def test_a_browser_finds_the_player_replays_a_round_and_downloads_the_statement(
    run: Run, tmp_path: Path
) -> None:
    from playwright.async_api import async_playwright

    chromium = chromium_path()
    with db.connect(run.dsn) as conn:
        add_user(conn, "agent", "s3cret-pass", "regulator", run.operator)
        player, round_id = conn.execute(
            "SELECT player_id, round_id FROM rounds WHERE status = 'settled' AND decision = 'call'"
            " ORDER BY bet_at LIMIT 1"
        ).fetchone() or ("", "")
    shots = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
    shots.mkdir(parents=True, exist_ok=True)
    day = days_of(run.dsn)[-1]
    with running_web(run.dsn) as url:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
            page = await browser.new_page(
                viewport={"width": 1280, "height": 900}, accept_downloads=True
            )
            await page.goto(f"{url}/rounds")
            await page.fill("#username", "agent")
            await page.fill("#password", "s3cret-pass")
            await page.screenshot(path=str(shots / "login.png"))
            await page.click("#login")
            await page.fill("#player", player)
            await page.click("#search")
            await page.wait_for_selector("#rounds a.round-link")
            await page.screenshot(path=str(shots / "search.png"), full_page=True)
            await page.click(f"#rounds a.round-link:text-is('{round_id}')")
            await page.wait_for_selector("#commitment")
            cards = await page.locator("#player-cards .card").all_inner_texts()
            assert len(cards) == 2 and all(c[-1] in "♠♥♦♣" for c in cards), cards
            assert "✔" in await page.inner_text("#commitment")
            assert await page.locator("#dealer-cards .card").count() == 2
            assert await page.locator("#board .card").count() == 5
            await page.screenshot(path=str(shots / "round.png"), full_page=True)
            await page.goto(f"{url}/statements?day={day.isoformat()}")
            await page.screenshot(path=str(shots / "statement.png"), full_page=True)
            async with page.expect_download() as waiting:
                await page.click("#statement-csv")
            download = await waiting.value
            text = await asyncio.to_thread(Path(await download.path()).read_text)
            await browser.close()
    lines = list(csv.DictReader(io.StringIO(text)))
    others = [d for d in days_of(run.dsn) if d != day]
    expected = audit_statement(run.records)
    if not others:  # the whole run on one UTC day: the download is the audit's figures
        found: dict[str, Any] = {k: sum(int(line[k]) for line in lines) for k in expected}
        assert found == expected
    else:
        assert lines and all(int(line["stakes"]) >= 0 for line in lines)
