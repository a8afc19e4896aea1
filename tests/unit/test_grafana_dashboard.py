"""The Grafana dashboard: valid JSON, on the provisioned Prometheus, real metrics only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from support.promql_names import (
    DASHBOARD,
    REPO,
    check_expressions,
    holdem_families,
    load_rules,
    recorded_names,
    rules_of,
)

Panel = dict[str, Any]


@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def panels(dashboard: dict[str, Any]) -> Iterator[Panel]:
    """Every panel, rows' nested panels included (rows themselves excluded)."""
    for panel in dashboard["panels"]:
        if panel["type"] == "row":
            yield from panel.get("panels", [])
        else:
            yield panel


def expressions(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for panel in panels(dashboard):
        for target in panel["targets"]:
            yield f"panel {panel['title']!r} {target['refId']}", target["expr"]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            text = query["query"] if isinstance(query, dict) else query
            yield f"variable {variable['name']}", text


def test_the_dashboard_is_a_grafana_dashboard(dashboard: dict[str, Any]) -> None:
    assert dashboard["uid"] and dashboard["title"]
    assert 36 <= dashboard["schemaVersion"] <= 41
    assert "id" not in dashboard or dashboard["id"] is None  # provisioning assigns ids
    nested = [p for row in dashboard["panels"] if row["type"] == "row" for p in row["panels"]]
    ids = [panel["id"] for panel in [*dashboard["panels"], *nested]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    for panel in dashboard["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] >= 0 and grid["w"] > 0 and grid["x"] + grid["w"] <= 24, panel["title"]


def test_every_panel_queries_the_provisioned_prometheus(dashboard: dict[str, Any]) -> None:
    provisioning = REPO / "deploy" / "grafana" / "provisioning" / "datasources" / "prometheus.yml"
    (source,) = yaml.safe_load(provisioning.read_text())["datasources"]
    expected = {"type": source["type"], "uid": source["uid"]}
    for panel in panels(dashboard):
        assert panel["datasource"] == expected, panel["title"]
        assert panel["targets"], f"{panel['title']} has no query"
        ref_ids = [target["refId"] for target in panel["targets"]]
        assert len(ref_ids) == len(set(ref_ids)), panel["title"]
        for target in panel["targets"]:
            assert target.get("datasource", expected) == expected, panel["title"]
            assert target["expr"].strip(), panel["title"]
    for variable in dashboard["templating"]["list"]:
        assert variable["datasource"] == expected, variable["name"]


def test_every_name_on_the_dashboard_is_a_real_metric_or_a_recorded_series(
    dashboard: dict[str, Any],
) -> None:
    check = check_expressions(expressions(dashboard), recorded_names())
    assert check.problems == []


def test_the_dashboard_shows_what_the_design_asks_for(dashboard: dict[str, Any]) -> None:
    text = " ".join(expr for _, expr in expressions(dashboard))
    for needle in (
        "holdem_rounds",  # rounds by outcome
        "holdem_rtp_main:ratio",
        "holdem_rtp_bonus:ratio",
        "vector(0.9918)",  # the certified figures as constant lines
        "vector(0.936)",
        "holdem_wagered_minor_total",
        "holdem_returned_minor_total",
        "holdem_voids",
        "holdem_rejected",
        "holdem_open_rounds",
        "holdem_command_latency_seconds:p99",
        "holdem_consumer_lag",
        "holdem_replay_duration_seconds",
        "holdem_records_consumed_total",  # the batch loop's own throughput (ADR 012)
        "holdem_dead_letters_total",
        "holdem_snapshots_total",
        "holdem_build_info",  # the release and its certified manifest's digest (issue 31)
    ):
        assert needle in text, needle


def test_every_domain_metric_is_watched_by_a_rule_or_the_dashboard(
    dashboard: dict[str, Any],
) -> None:
    rule_exprs = [(str(rule.get("record")), rule["expr"]) for rule in rules_of(load_rules())]
    used = check_expressions([*expressions(dashboard), *rule_exprs], recorded_names()).used
    families = holdem_families()
    watched = {family for family in families for name in used if name.startswith(family)}
    assert families - watched == set()
