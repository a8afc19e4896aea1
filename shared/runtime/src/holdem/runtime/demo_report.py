"""The demo's strategy lookup and its summary: results, RTP beside exact figures, speed, audit."""

from __future__ import annotations

import argparse
import importlib
from typing import TYPE_CHECKING, Any

from holdem.runtime.audit import AuditReport
from holdem.runtime.load import Decide, Plan, Tally, always_call, percentile

if TYPE_CHECKING:
    from holdem.runtime.demo import Setup

OUTCOMES = ("win", "lose", "push", "fold", "voided")
SHOWN_VIOLATIONS = 10


def strategy_for(name: str) -> Decide:
    """The named player strategy of holdem.core.strategy; until that module exists only
    ``always-call`` is available (a stub, named as such in the summary)."""
    try:
        module: Any = importlib.import_module("holdem.core.strategy")
    except ImportError:
        module = None
    if module is None:
        if name in {"always-call", "basic"}:
            return always_call
        raise SystemExit(f"unknown strategy {name!r}: holdem.core.strategy is not available")
    found: Decide = module.strategy(name)
    return found


def exact_rtp(name: str) -> tuple[float | None, float | None, str]:
    """(main game, AA Bonus, source) exact RTP for the strategy, if holdem.core.rtp has them."""
    try:
        module: Any = importlib.import_module("holdem.core.rtp")
    except ImportError:
        return None, None, "holdem.core.rtp not available"
    figures = module.exact(name)
    return figures.main, figures.bonus, "holdem.core.rtp, exact by enumeration"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}%"


def _ratio(returned: int, wagered: int) -> float | None:
    return returned / wagered if wagered else None


def _outcomes(tally: Tally) -> str:
    shown = [f"{name} {tally.outcomes[name]}" for name in OUTCOMES]
    other = sorted(k for k in tally.outcomes if k not in OUTCOMES)
    shown += [f"{name} {tally.outcomes[name]}" for name in other]
    return ", ".join(shown) + f" (voided by the operator: {tally.operator_voids})"


def _rtp_lines(args: argparse.Namespace, tally: Tally) -> list[str]:
    main, bonus, source = exact_rtp(args.strategy)
    settled = sum(tally.outcomes[k] for k in ("win", "lose", "push", "fold"))
    observed = _ratio(tally.main_returned, tally.main_wagered)
    observed_bonus = _ratio(tally.bonus_returned, tally.bonus_wagered)
    return [
        f"main-game RTP: {_pct(observed)} observed over {settled} settled rounds "
        f"(ante + call returned / wagered); exact for {args.strategy}: {_pct(main)} [{source}]",
        f"AA-bonus RTP: {_pct(observed_bonus)} observed "
        f"({tally.bonus_wagered} wagered, {tally.bonus_returned} returned); "
        f"exact: {_pct(bonus)} [{source}]",
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
) -> str:
    """The summary block `make run` prints; one ``key: value`` per line."""
    broker = "local, started for this run" if where.own_broker else "given"
    metrics = " ".join(f"{n}:{p}" for n, p in ports.items()) or "off"
    speed = tally.rounds / tally.seconds
    lines = [
        "== Casino Hold'em demo: summary",
        f"broker: {where.bootstrap} ({broker}); topics {where.topics.commands} etc., "
        f"{where.partitions} partitions",
        f"services: dealer, wallet, settlement as separate processes; metrics {metrics}; "
        f"logs {where.log_dir}",
        f"players: {plan.players}; strategy {args.strategy}; ante {plan.ante}, "
        f"AA bonus {plan.aa_bonus} (minor units, {plan.currency})",
        f"rounds: {tally.rounds} (of {args.rounds} asked)",
        f"outcomes: {_outcomes(tally)}",
        *_rtp_lines(args, tally),
        f"speed: {speed:.1f} rounds/s through Kafka ({tally.rounds} rounds in "
        f"{tally.seconds:.2f}s; round latency p50 {percentile(tally.latencies, 0.5):.3f}s, "
        f"p95 {percentile(tally.latencies, 0.95):.3f}s)",
        *_audit_lines(report),
    ]
    lines += [f"stalled: {text}" for text in tally.stalled[:SHOWN_VIOLATIONS]]
    return "\n".join(lines)
