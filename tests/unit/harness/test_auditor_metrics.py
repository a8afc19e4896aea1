"""The live auditor's alert rules name only metrics it exports, and each alert is shown to
fire and to stay silent in its promtool tests (which test_prometheus_rules.py runs)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from prometheus_client import CollectorRegistry

from holdem.harness.auditor_service import AuditorMetrics

DEPLOY = Path(__file__).resolve().parents[3] / "deploy" / "prometheus"
RULES = DEPLOY / "rules" / "auditor.rules.yml"
TESTS = DEPLOY / "tests" / "auditor.rules.test.yml"


def alerts() -> dict[str, dict[str, object]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return {rule["alert"]: rule for group in groups for rule in group["rules"] if "alert" in rule}


def test_every_metric_in_the_rules_is_exported_by_the_auditor() -> None:
    registry = CollectorRegistry()
    AuditorMetrics(registry).announce_build()
    exported = {sample.name for family in registry.collect() for sample in family.samples}
    used = {
        name
        for rule in alerts().values()
        for name in re.findall(r"holdem_[a-z_]+", str(rule["expr"]))
    }
    assert used, "no auditor metric in the rules"
    assert used <= exported, used - exported


def test_the_three_alerts_fire_and_stay_silent_with_their_severities() -> None:
    rules = alerts()
    severities = {name: rule["labels"]["severity"] for name, rule in rules.items()}  # type: ignore[index]
    assert severities == {
        "AuditViolation": "critical",
        "AuditorBehind": "warning",
        "AuditorDown": "critical",
    }
    assert "for" not in rules["AuditViolation"]  # at once
    assert rules["AuditorBehind"]["for"] == "5m" and "> 120" in str(rules["AuditorBehind"]["expr"])
    cases = [
        case
        for test in yaml.safe_load(TESTS.read_text())["tests"]
        for case in test.get("alert_rule_test", [])
    ]
    assert {c["alertname"] for c in cases if c.get("exp_alerts")} == set(rules)
    assert {c["alertname"] for c in cases if not c.get("exp_alerts")} == set(rules)
