"""The metric names PromQL expressions use, checked against what the services really expose.

The exposed names come from the registries themselves: each service's, with the runtime's
``holdem.runtime.metrics.Metrics`` and the service's own counters (``holdem.<service>.metrics``),
registered in a fresh ``CollectorRegistry`` and expanded the way the text exposition names samples
(counters ``_total``, histograms ``_bucket``/``_sum``/``_count``). A service registers nothing
else (no faststream middleware, ADR 023): a ``faststream_*`` name in a rule is reported unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from prometheus_client import CollectorRegistry

from holdem.dealer.metrics import DealerCounters
from holdem.harness.auditor_service import AuditorMetrics
from holdem.runtime.metrics import CountersFactory, Metrics
from holdem.settlement.metrics import SettlementCounters
from holdem.wallet.metrics import WalletCounters

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "deploy" / "prometheus" / "rules" / "holdem.rules.yml"
# promtool unit tests of the rules (the RTP ones in their own file: they need coarser steps).
RULE_TESTS = tuple(sorted((REPO / "deploy" / "prometheus" / "tests").glob("*.test.yml")))
PROMETHEUS_CONFIG = REPO / "deploy" / "prometheus" / "prometheus.yml"
DASHBOARD = REPO / "deploy" / "grafana" / "dashboards" / "holdem.json"

# Labels every scraped series gets from its target in prometheus.yml.
TARGET_LABELS = frozenset({"job", "instance", "service", "tenant"})
# Series Prometheus writes itself for every target.
SYNTHETIC: dict[str, frozenset[str]] = {"up": frozenset(), "scrape_duration_seconds": frozenset()}

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_RANGE = re.compile(r"\[[^\]]*\]")
_NAME = re.compile(r"(?<![\w:.$])[A-Za-z_:][\w:]*")
_SELECTOR = re.compile(r"(?<![\w:.$])([A-Za-z_:][\w:]*)\s*\{([^}]*)\}")
_MATCHER_LABEL = re.compile(r"([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)")


def _exposed(registry: CollectorRegistry) -> dict[str, frozenset[str]]:
    """Sample name -> label names, for every family in ``registry``."""
    # Label names are not public in prometheus_client: read from the collectors.
    collectors = registry._names_to_collectors
    names: dict[str, frozenset[str]] = {}
    for family in registry.collect():
        labels = frozenset(getattr(collectors[family.name], "_labelnames", ()))
        suffixes: Mapping[str, frozenset[str]] = {
            "counter": {"_total": labels, "_created": labels},
            "gauge": {"": labels},
            "histogram": {
                "_bucket": labels | {"le"},
                "_sum": labels,
                "_count": labels,
                "_created": labels,
            },
            "summary": {"": labels | {"quantile"}, "_sum": labels, "_count": labels},
        }[family.type]
        for suffix, label_names in suffixes.items():
            names[family.name + suffix] = label_names
    return names


# Each service's own counters (the query service has none), as its Spec passes them in.
SERVICE_COUNTERS: tuple[CountersFactory | None, ...] = (
    DealerCounters,
    SettlementCounters,
    WalletCounters,
    None,
)


def _service_registries() -> list[CollectorRegistry]:
    """One registry per service, as its process fills it: the runtime's metrics and its own."""
    registries = []
    for counters in SERVICE_COUNTERS:
        registry = CollectorRegistry()
        metrics = Metrics(registry)
        if counters is not None:
            counters(metrics)
        registries.append(registry)
    auditor = CollectorRegistry()  # the live auditor (holdem-auditor): its own families
    AuditorMetrics(auditor)
    registries.append(auditor)
    return registries


def holdem_names() -> dict[str, frozenset[str]]:
    """The metrics some service registers (the runtime's and the services' own)."""
    names: dict[str, frozenset[str]] = {}
    for registry in _service_registries():
        names.update(_exposed(registry))
    return names


def holdem_families() -> set[str]:
    """Family names (without sample suffixes) of the metrics some service registers."""
    return {family.name for r in _service_registries() for family in r.collect()}


def load_rules() -> dict[str, Any]:
    rules: dict[str, Any] = yaml.safe_load(RULES.read_text())
    return rules


def rules_of(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [rule for group in document["groups"] for rule in group["rules"]]


def recorded_names() -> set[str]:
    return {rule["record"] for rule in rules_of(load_rules()) if "record" in rule}


def _clean(expr: str) -> str:
    """The expression without string literals and range/subquery brackets."""
    return _RANGE.sub("", _STRING.sub('""', expr))


def names_in(expr: str) -> set[str]:
    """Every metric or recorded series name ``expr`` selects (functions and keywords excluded)."""
    cleaned = _clean(expr)
    found = set()
    for match in _NAME.finditer(cleaned):
        name = match.group(0)
        rest = cleaned[match.end() :].lstrip()
        if rest.startswith("("):  # a function call or aggregation
            continue
        if ":" in name or name.startswith(("holdem_", "faststream_")) or name in SYNTHETIC:
            found.add(name)
    return found


def selector_labels(expr: str) -> dict[str, set[str]]:
    """Metric name -> the label names its selectors in ``expr`` match on."""
    labels: dict[str, set[str]] = {}
    for name, matchers in _SELECTOR.findall(_clean(expr)):
        if name in {"by", "without", "on", "ignoring", "group_left", "group_right"}:
            continue
        labels.setdefault(name, set()).update(_MATCHER_LABEL.findall(matchers))
    return labels


@dataclass
class NameCheck:
    """What the expressions use that nothing defines; empty lists mean all is known."""

    unknown_metrics: list[str] = field(default_factory=list)
    unknown_recorded: list[str] = field(default_factory=list)
    unknown_labels: list[str] = field(default_factory=list)
    used: set[str] = field(default_factory=set)

    @property
    def problems(self) -> list[str]:
        return self.unknown_metrics + self.unknown_recorded + self.unknown_labels


def check_expressions(exprs: Iterable[tuple[str, str]], recorded: set[str]) -> NameCheck:
    """Check ``(where, expr)`` pairs: metrics exist, recorded series are recorded, labels exist."""
    exposed = {**holdem_names(), **SYNTHETIC}
    check = NameCheck()
    for where, expr in exprs:
        for name in sorted(names_in(expr)):
            check.used.add(name)
            if ":" in name:
                if name not in recorded:
                    check.unknown_recorded.append(f"{where}: {name} is not a recording rule")
            elif name not in exposed:
                check.unknown_metrics.append(f"{where}: {name} is not exposed by any service")
        for name, label_names in selector_labels(expr).items():
            if name not in exposed:
                continue  # recorded series, or reported above
            unknown = label_names - exposed[name] - TARGET_LABELS
            if unknown:
                check.unknown_labels.append(f"{where}: {name} has no label {sorted(unknown)}")
    return check
