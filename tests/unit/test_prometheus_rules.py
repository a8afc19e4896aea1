"""The Prometheus rules: valid for promtool, their unit tests pass, every name in them exists.

promtool comes from Debian's `prometheus` package, which deploy/prometheus/provision.sh unpacks
into a project-local cache on first use. If it cannot, these tests fail with its one-line reason,
never skip: a skipped rule check looks green and proves nothing.
"""

from __future__ import annotations

import glob
import subprocess
from pathlib import Path

import pytest
import yaml
from support.prometheus import binary
from support.promql_names import (
    PROMETHEUS_CONFIG,
    REPO,
    RULE_TESTS,
    RULES,
    check_expressions,
    load_rules,
    recorded_names,
    rules_of,
)

# promtool's 24 h RTP tests take about 20 s here but more than 120 s at load average 70:
# generous hang guards, not figures.
pytestmark = pytest.mark.timeout(600)

SEVERITIES = {"critical", "warning"}  # critical pages, warning is a ticket
ANNOTATIONS = {"summary", "description", "runbook"}


def run_promtool(*args: str | Path) -> str:
    """promtool's output; a promtool that cannot be provisioned fails the test (saying why)."""
    result = subprocess.run(
        [binary("promtool"), *map(str, args)], cwd=REPO, capture_output=True, text=True, timeout=540
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"promtool {' '.join(map(str, args))} failed:\n{output}"
    return output


def test_promtool_accepts_the_rules() -> None:
    run_promtool("check", "rules", RULES)


def test_promtool_unit_tests_of_the_rules_pass() -> None:
    assert len(RULE_TESTS) >= 2, RULE_TESTS
    output = run_promtool("test", "rules", *RULE_TESTS)
    assert output.count("SUCCESS") == len(RULE_TESTS), output


def test_promtool_accepts_the_prometheus_config_and_its_rule_files() -> None:
    output = run_promtool("check", "config", PROMETHEUS_CONFIG)
    assert str(RULES.relative_to(PROMETHEUS_CONFIG.parent)) in output


def test_the_prometheus_config_loads_the_rules_in_the_container_and_here() -> None:
    config = yaml.safe_load(PROMETHEUS_CONFIG.read_text())
    matched = {
        Path(path).resolve()
        for pattern in config["rule_files"]
        for path in glob.glob(str(PROMETHEUS_CONFIG.parent / pattern))
    }
    assert RULES.resolve() in matched
    # relative paths resolve against the config's folder, which compose mounts whole
    assert all(not Path(pattern).is_absolute() for pattern in config["rule_files"])
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    prometheus = compose["services"]["prometheus"]
    assert "./deploy/prometheus:/etc/prometheus:ro" in prometheus["volumes"]
    assert "--config.file=/etc/prometheus/prometheus.yml" in prometheus["command"]


def test_every_alert_has_a_severity_a_summary_a_description_and_a_runbook() -> None:
    alerts = [rule for rule in rules_of(load_rules()) if "alert" in rule]
    assert alerts
    for alert in alerts:
        assert alert.get("labels", {}).get("severity") in SEVERITIES, alert["alert"]
        missing = ANNOTATIONS - {
            key for key, text in alert.get("annotations", {}).items() if text.strip()
        }
        assert not missing, f"{alert['alert']} lacks {sorted(missing)}"


def test_every_alert_has_a_firing_and_a_silent_case_in_the_promtool_tests() -> None:
    alerts = {rule["alert"] for rule in rules_of(load_rules()) if "alert" in rule}
    # The tests of these rules (the back office's have their own file: tests/unit/backoffice/)
    documents = [yaml.safe_load(path.read_text()) for path in RULE_TESTS]
    cases = [
        case
        for document in documents
        if any(name.endswith(RULES.name) for name in document["rule_files"])
        for test in document["tests"]
        for case in test.get("alert_rule_test", [])
    ]
    fires = {case["alertname"] for case in cases if case.get("exp_alerts")}
    silent = {case["alertname"] for case in cases if not case.get("exp_alerts")}
    assert alerts - fires == set(), "alerts never shown to fire"
    assert alerts - silent == set(), "alerts never shown to stay silent"
    assert (fires | silent) - alerts == set(), "tests of alerts that do not exist"


def test_the_alerts_cover_what_the_design_asks_for() -> None:
    exprs = " ".join(rule["expr"] for rule in rules_of(load_rules()) if "alert" in rule)
    for needle in (
        "holdem_rtp_main",
        "holdem_rtp_bonus",
        "holdem_void",
        "holdem_open_rounds",
        "holdem_consumer_lag",
        "holdem_rejected",
        "up{",
        "holdem_replays_over_60s",
        "holdem_malfunction_after_settlement_total",
    ):
        assert needle in exprs, needle


def test_every_name_in_the_rules_is_a_real_metric_or_a_recorded_series() -> None:
    rules = rules_of(load_rules())
    check = check_expressions(
        ((rule.get("record") or rule["alert"], rule["expr"]) for rule in rules), recorded_names()
    )
    assert check.problems == []
    assert any(name.startswith("holdem_") for name in check.used)


def test_recorded_series_are_defined_once_and_follow_level_metric_operation() -> None:
    names = [rule["record"] for rule in rules_of(load_rules()) if "record" in rule]
    assert len(names) == len(set(names))
    for name in names:
        _level, metric, operation = name.split(":")
        assert metric.startswith("holdem_") and operation, name
