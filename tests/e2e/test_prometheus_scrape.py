"""A real Prometheus scrapes the three services during a short run; its rules give the run's RTP.

The RTP rules use increase(), which starts counting at a series' first sample and scales the
increase to the window by the series' own sample span. Series born during the run would each get
their own scale, so a warm-up plays rounds until every wagered and returned series exists and is
above zero, then Prometheus starts; the measured run is what happens after its first scrape,
and every series then shares one span: the ratio of their increases is the run's exact RTP.
"""

from __future__ import annotations

import asyncio
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from support.kafka import Cluster
from support.prometheus import (
    PrometheusServer,
    eventually,
    free_loopback_port,
    prometheus_server,
    rules_every,
    wait_until,
)
from support.promql_names import RULES

from holdem.client import Operator
from holdem.core.strategy import STRATEGIES
from holdem.core.wire.topics import Topics
from holdem.harness.audit import audit_run
from holdem.harness.load import Plan, Tally, fund, play
from holdem.ops.launcher import SERVICES, Launcher
from holdem.runtime.topic_setup import ensure_topics

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(300)]

PARTITIONS = 3
INTERVAL = "1s"  # scrape and rule evaluation: a short run still gets many samples
WARM_UP_BATCHES = 20  # of 16 rounds; an AA Bonus win needs ~15 rounds on average
RUN = Plan(rounds=48, players=8, step_s=60.0)
WAIT_S = 60.0  # bound of every wait on Prometheus (scrapes and evaluations happen every second)
BETS = ("ante", "call", "aa_bonus")


def settled_series(url: str) -> dict[tuple[str, str], float]:
    """(family, bet) -> value of the wagered/returned counters on one /metrics page."""
    with urllib.request.urlopen(url, timeout=5) as page:
        text = page.read().decode()
    return {
        (family.name, sample.labels["bet"]): sample.value
        for family in text_string_to_metric_families(text)
        if family.name in ("holdem_wagered_minor", "holdem_returned_minor")
        for sample in family.samples
        if sample.name.endswith("_total")
    }


async def warm_up(operator: Operator, metrics_url: str) -> list[Tally]:
    """Rounds until settlement's every wagered and returned series is above zero."""
    tallies = []
    for batch in range(WARM_UP_BATCHES):
        plan = Plan(rounds=16, players=8, tag=f"w{batch}{RUN.tag}", step_s=RUN.step_s)
        await fund(operator, plan)
        tallies.append(await play(operator, plan, STRATEGIES["basic"]))
        series = await asyncio.to_thread(settled_series, metrics_url)
        if len(series) == 2 * len(BETS) and all(series.values()):
            return tallies
    raise AssertionError(f"some wagered/returned series still zero: {series}")


def counted(server: PrometheusServer, promql: str) -> float:
    return server.scalar(promql) or 0.0


async def test_prometheus_scrapes_the_services_and_its_rules_give_the_run_rtp(
    kafka: Cluster, tmp_path: Path
) -> None:
    topics = Topics.unique("prom")
    prefix = topics.commands.removesuffix(".holdem.commands")
    await ensure_topics(kafka.admin, topics, partitions=PARTITIONS, wait=60)
    await kafka.authorize(prefix)
    ports = {name: free_loopback_port() for name in SERVICES}
    targets = {name: f"127.0.0.1:{port}" for name, port in ports.items()}
    rules = rules_every(INTERVAL, RULES, tmp_path / "holdem.rules.yml")
    launcher = Launcher(
        kafka.bootstrap, tmp_path / "logs", prefix, PARTITIONS, ports, credentials=kafka.principals
    )

    async with launcher, Operator(kafka.operator, topics, PARTITIONS) as operator:
        before = await warm_up(operator, f"http://{targets['settlement']}/metrics")
        async with prometheus_server(tmp_path, targets, (rules,), INTERVAL) as prom:
            await eventually(lambda: all_up(prom), "every target up", WAIT_S)
            await fund(operator, RUN)
            run = await play(operator, RUN, STRATEGIES["basic"])
            await asyncio.to_thread(check_counters, prom, [*before, run])
            await asyncio.to_thread(check_rtp, prom, run)
        report = await audit_run(kafka.admin, topics)

    assert not run.stalled, run.stalled
    assert report.ok, report.violations[:20]
    assert report.rounds == report.ended == sum(t.rounds for t in [*before, run])
    main, bonus = run.main_returned / run.main_wagered, run.bonus_returned / run.bonus_wagered
    rounds = f"warm-up {sum(t.rounds for t in before)} rounds, run {run.rounds}"
    print(f"\nprometheus: {rounds}; recorded 1 h RTP: main {main:.6f}, AA Bonus {bonus:.6f}")


def all_up(prom: PrometheusServer) -> bool:
    targets = prom.api("targets")["activeTargets"]
    health = {target["labels"]["job"]: target["health"] for target in targets}
    # A sample of the counters is in: the run starts after Prometheus's first look at them.
    seen = prom.scalar('count(holdem_wagered_minor_total{service="settlement"})')
    return health == dict.fromkeys(SERVICES, "up") and seen == len(BETS)


def check_counters(prom: PrometheusServer, tallies: list[Tally]) -> None:
    """Once the last round is scraped: rounds by outcome and money as played."""
    outcomes = sum((t.outcomes for t in tallies), Counter[str]())
    wagered = sum(t.main_wagered + t.bonus_wagered for t in tallies)
    returned = sum(t.main_returned + t.bonus_returned for t in tallies)

    def scraped() -> bool:  # the wallet and dealer are scraped apart from settlement
        money = counted(prom, "sum(holdem_wagered_minor_total)") == wagered
        return money and counted(prom, "sum(holdem_open_rounds)") == 0

    wait_until(scraped, f"{wagered} wagered and no open round in Prometheus", WAIT_S)
    by_outcome = prom.by("outcome", "sum by (outcome) (holdem_rounds_total)")
    assert by_outcome == {outcome: float(n) for outcome, n in (+outcomes).items()}
    assert counted(prom, "sum(holdem_returned_minor_total)") == returned
    assert wagered > 0 and returned > 0
    assert counted(prom, "sum(holdem_rejected_total)") == 0


def check_rtp(prom: PrometheusServer, run: Tally) -> None:
    """The recorded 1 h RTPs equal the measured run's, from its Settled events."""
    recorded_equals(prom, "currency:holdem_rtp_main:ratio1h", run.main_returned / run.main_wagered)
    bonus = run.bonus_returned / run.bonus_wagered
    recorded_equals(prom, "currency:holdem_rtp_bonus:ratio1h", bonus)


def recorded_equals(prom: PrometheusServer, series: str, rtp: float) -> None:
    """Wait until the recorded series of the run's currency is ``rtp`` (to float rounding)."""
    selector = f'{series}{{currency="{RUN.currency}"}}'
    seen: list[float | None] = []

    def recorded() -> bool:
        seen.append(prom.scalar(selector))
        return seen[-1] is not None and abs(seen[-1] - rtp) < 1e-9

    try:
        wait_until(recorded, f"{selector} = {rtp}", WAIT_S)
    except AssertionError as error:
        raise AssertionError(f"{error}; last recorded {seen[-3:]}") from None
