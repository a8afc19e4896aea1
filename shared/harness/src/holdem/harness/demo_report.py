"""The demo's strategy lookup and its summary: results, RTP beside exact figures, speed, audit."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from holdem.core.strategy import PUBLISHED, STRATEGIES, Decide
from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics
from holdem.harness.audit import AuditReport
from holdem.harness.load import Plan, Tally, percentile
from holdem.math.sim import exact_figures

OUTCOMES = ("win", "lose", "push", "fold", "voided")
SHOWN_VIOLATIONS = 10


@dataclass(frozen=True)
class Setup:
    """Where the run plays: the broker, the topics, and where the services' logs go."""

    bootstrap: str
    prefix: str
    partitions: int
    log_dir: Path
    own_broker: bool
    principals: dict[str, KafkaConnection]  # admin sets up and audits, operator plays

    @property
    def topics(self) -> Topics:
        return Topics().with_prefix(self.prefix) if self.prefix else Topics()


@dataclass(frozen=True)
class Exact:
    """A strategy's exact RTPs (holdem.math.rtp, by full enumeration) and the rule sheet's."""

    main: float | None
    bonus: float | None
    note: str  # where the exact figures come from, or why there are none
    sheet: tuple[str, str] = ("-", "-")  # the rule sheet's published (main, bonus), percent


def strategy_for(name: str) -> Decide:
    """The named player strategy of holdem.core.strategy."""
    if name not in STRATEGIES:
        raise SystemExit(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    return STRATEGIES[name]


def exact_rtp(name: str) -> Exact:
    """The strategy's exact figures from the cached enumeration (computed once if missing:
    about 30 s on two cores, then cached in holdem-math's cache directory)."""
    main, bonus, _ = exact_figures(name)
    sheet = PUBLISHED.get(name, ("-", "-"))
    return Exact(float(main), float(bonus), "exact by full enumeration, holdem.math.rtp", sheet)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"


def _outcomes(tally: Tally) -> str:
    shown = [f"{name} {tally.outcomes[name]}" for name in OUTCOMES]
    other = sorted(k for k in tally.outcomes if k not in OUTCOMES)
    shown += [f"{name} {tally.outcomes[name]}" for name in other]
    return ", ".join(shown) + f" (voided by the operator: {tally.operator_voids})"


def _observed(tally: Tally) -> tuple[str, str]:
    """Observed main-game and AA-bonus RTP, each with its 95% confidence half-width."""
    sums = tally.returns
    if sums.rounds < 2:
        return "n/a", "n/a"
    main = "{} ± {}".format(*map(_pct, sums.main_rtp()))
    bonus = "{} ± {}".format(*map(_pct, sums.bonus_rtp())) if sums.sums["b"] else "n/a"
    return main, bonus


def _rtp_lines(args: argparse.Namespace, tally: Tally, exact: Exact) -> list[str]:
    main, bonus = _observed(tally)
    main_sheet, bonus_sheet = exact.sheet
    return [
        f"main-game RTP: {main} observed (95% CI, {tally.returns.rounds} settled rounds, "
        f"ante + call returned / wagered); exact for {args.strategy}: {_pct(exact.main)} "
        f"[{exact.note}]; rule sheet: {main_sheet}%",
        f"AA-bonus RTP: {bonus} observed ({tally.bonus_wagered} wagered, "
        f"{tally.bonus_returned} returned); exact: {_pct(exact.bonus)}; rule sheet: {bonus_sheet}%",
    ]


def _audit_lines(report: AuditReport) -> list[str]:
    verdict = "OK" if report.ok else f"FAILED ({len(report.violations)} violations)"
    lines = [
        f"invariants: {verdict} ({report.records} records of the run's 5 topics; "
        f"{report.rounds} accepted bets, {report.ended} ended)"
    ]
    lines += [f"  violation: {v}" for v in report.violations[:SHOWN_VIOLATIONS]]
    if len(report.violations) > SHOWN_VIOLATIONS:
        lines.append(f"  ... and {len(report.violations) - SHOWN_VIOLATIONS} more")
    return lines


def summary(
    args: argparse.Namespace,
    where: Setup,
    ports: dict[str, int],
    tally: Tally,
    report: AuditReport,
    plan: Plan,
    exact: Exact,
    picture: str = "not drawn",
) -> str:
    """The summary block `make run` prints; one ``key: value`` per line."""
    lines = [
        "== Casino Hold'em demo: summary",
        *_setup_lines(where, ports),
        f"players: {plan.players}; strategy {args.strategy}; ante {plan.ante}, "
        f"AA bonus {plan.aa_bonus} (minor units, {plan.currency})",
        f"rounds: {tally.rounds} (of {args.rounds} asked)",
        f"outcomes: {_outcomes(tally)}",
        *_rtp_lines(args, tally, exact),
        f"speed: {tally.rounds / tally.seconds:.1f} rounds/s through Kafka ({tally.rounds} "
        f"rounds in {tally.seconds:.2f}s; round latency p50 "
        f"{percentile(tally.latencies, 0.5):.3f}s, p95 {percentile(tally.latencies, 0.95):.3f}s)",
        *_audit_lines(report),
        f"picture: {picture} (observed main-game RTP by rounds, 95% band, exact RTP)",
    ]
    lines += [f"stalled: {text}" for text in tally.stalled[:SHOWN_VIOLATIONS]]
    return "\n".join(lines)


def _setup_lines(where: Setup, ports: dict[str, int]) -> list[str]:
    broker = "local, started for this run" if where.own_broker else "given"
    metrics = " ".join(f"{n}:{p}" for n, p in ports.items()) or "off"
    return [
        f"broker: {where.bootstrap} ({broker}); topics {where.topics.commands} etc., "
        f"{where.partitions} partitions",
        f"services: dealer, wallet, settlement, query as separate processes; metrics {metrics}; "
        f"logs {where.log_dir}",
    ]
