"""The back office's alert rules name only metrics the back office exports."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from prometheus_client import REGISTRY

from holdem.backoffice import metrics

RULES = Path(__file__).resolve().parents[3] / "deploy/prometheus/rules/backoffice.rules.yml"


def test_every_metric_in_the_rules_is_exported_by_the_back_office() -> None:
    assert metrics.LAG is not None
    exported = {sample.name for family in REGISTRY.collect() for sample in family.samples} | {
        family.name for family in REGISTRY.collect()
    }
    groups = yaml.safe_load(RULES.read_text())["groups"]
    used = {
        name
        for group in groups
        for rule in group["rules"]
        for name in re.findall(r"holdem_backoffice_[a-z_]+", rule["expr"])
        if not rule.get("record") or name not in rule["record"]
    }
    assert used, "no back office metric in the rules"
    assert used <= exported, used - exported


def test_every_back_office_alert_fires_and_stays_silent_in_its_promtool_tests() -> None:
    alerts = {
        rule["alert"]
        for group in yaml.safe_load(RULES.read_text())["groups"]
        for rule in group["rules"]
        if "alert" in rule
    }
    tests = RULES.parents[1] / "tests" / "backoffice.rules.test.yml"
    cases = [
        case
        for test in yaml.safe_load(tests.read_text())["tests"]
        for case in test.get("alert_rule_test", [])
    ]
    assert {c["alertname"] for c in cases if c.get("exp_alerts")} == alerts
    assert {c["alertname"] for c in cases if not c.get("exp_alerts")} == alerts
