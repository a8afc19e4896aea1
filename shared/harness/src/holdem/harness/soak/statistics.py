"""The soak's figures from its samples: slopes, peaks, per-minute series and p99s."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from holdem.harness.load import percentile
from holdem.harness.soak.config import (
    FLAT_JUDGED,
    FLAT_MB_PER_H,
    FLOOR_S,
    JUDGED_MINUTES,
    P99_DRIFT,
    TOPIC_GROWTH,
    Config,
    Samples,
)


def slope_per_hour(points: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, value) points, per hour; 0.0 with fewer than two."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    var = sum((t - mx) ** 2 for t, _ in points)
    return 0.0 if var == 0 else 3600 * sum((t - mx) * (v - my) for t, v in points) / var


def floor(
    points: Sequence[tuple[float, float]], window_s: float = FLOOR_S
) -> list[tuple[float, float]]:
    """The lowest of the points in each ``window_s`` of time (that point, time and value): a
    memory series without its transient peaks. The soak of 2026-12-06 judged the wallet's memory
    "not flat" at -16.8 MB/h by least squares over every sample, from peaks of up to 90 MB (its
    snapshots being built), more of them early, over a floor that stayed at 215-219 MB."""
    lowest: dict[int, tuple[float, float]] = {}
    for t, v in points:
        key = int(t // window_s)
        if key not in lowest or v < lowest[key][1]:
            lowest[key] = (t, v)
    return [lowest[key] for key in sorted(lowest)]


def peak(points: Sequence[tuple[float, float]]) -> float:
    return max((v for _, v in points), default=0.0)


def figures(
    config: Config, samples: Samples, seconds: float, audit: dict[str, Any]
) -> dict[str, Any]:
    """The report's figures from the samples; every window is of the measured period, which
    begins after the warm-up (``seconds``: since the load began, warm-up included)."""
    begins = min(seconds, config.warmup_minutes * 60)
    measured = seconds - begins
    tail_from = begins + measured / 4  # the last three quarters: 45 minutes of an hour
    window = measured / 6  # ten minutes of an hour
    memory = {}
    for label, points in sorted(samples.rss_mb.items()):
        kept = [(t, v) for t, v in points if t >= begins] or points
        slope = slope_per_hour(floor([(t, v) for t, v in kept if t >= tail_from]))
        memory[label] = {
            "service": label in FLAT_JUDGED,
            "first_mb": kept[0][1],
            "last_mb": kept[-1][1],
            "max_mb": peak(kept),
            "slope_mb_per_h": round(slope, 2),
            "flat": abs(slope) < FLAT_MB_PER_H,
            # What is judged: memory that grows with the log. A floor that falls over the hour
            # (the live auditor's of 2026-12-06: -21.6 MB/h, after its catch-up's peak) is
            # memory given back, not held; reported, not failed.
            "grows": slope >= FLAT_MB_PER_H,
        }
    latency = {}
    for step, points in samples.steps.items():
        first = [s for t, s in points if begins <= t < begins + window]
        last = [s for t, s in points if t >= seconds - window]
        p99_first, p99_last = percentile(first, 0.99), percentile(last, 0.99)
        latency[step] = {
            "p50_ms": round(1000 * percentile([s for t, s in points if t >= begins], 0.5), 1),
            "p99_first_ms": round(1000 * p99_first, 1),
            "p99_last_ms": round(1000 * p99_last, 1),
            "ratio": round(p99_last / p99_first, 3) if p99_first else None,
            "n": len(points),
        }
    third = measured / 3
    sizes = {}
    for topic, points in sorted(samples.topic_mb.items()):
        early = peak([(t, v) for t, v in points if begins <= t < begins + third])
        late = peak([(t, v) for t, v in points if t >= seconds - third])
        sizes[topic] = {
            "first_mb": points[0][1],
            "last_mb": points[-1][1],
            "compacted": topic.endswith(".snapshots"),
            "peak_first_third_mb": early,
            "peak_last_third_mb": late,
            "bounded": late <= TOPIC_GROWTH * early,
        }
    return {
        "config": {k: str(v) for k, v in asdict(config).items()},
        "seconds": round(seconds, 1),
        "warmup_seconds": round(begins, 1),
        "measured_seconds": round(measured, 1),
        "judged": measured >= JUDGED_MINUTES * 60,
        "rounds": samples.rounds,
        "rounds_per_s": round(samples.rounds / seconds, 1) if seconds else 0.0,
        "outcomes": dict(sorted(samples.outcomes.items())),
        "not_offered": samples.not_offered,
        "failures": len(samples.failures),
        "failure_examples": samples.failures[:5],
        "memory": memory,
        "flat_threshold_mb_per_h": FLAT_MB_PER_H,
        "latency": latency,
        "p99_drift_limit": P99_DRIFT,
        "max_lag": {name: max(v for _, v in points) for name, points in samples.lag.items()},
        "auditor_max_lag_s": max((v for _, v in samples.auditor_lag_s), default=None),
        "topics_mb": sizes,
        "topic_growth_limit": TOPIC_GROWTH,
        "errors": len(samples.errors),
        "error_lines": samples.errors[:20],
        "produce_retries": dict(sorted(samples.produce_retries.items())),
        "audit": audit,
        # per minute, for whoever wants to check a figure or plot it again
        "series": {
            "rss_mb": per_minute_last(samples.rss_mb),
            # every sample, so that a run can be judged again (the floor fit needs them)
            "rss_mb_samples": {
                label: [(round(t, 1), round(v, 1)) for t, v in points]
                for label, points in sorted(samples.rss_mb.items())
            },
            "topic_mb": per_minute_last(samples.topic_mb),
            "p99_ms": {
                k: [(t, round(v, 1)) for t, v in p]
                for k, p in per_minute_p99(samples.steps).items()
            },
        },
    }


def per_minute_last(
    series: dict[str, list[tuple[float, float]]],
) -> dict[str, list[tuple[int, float]]]:
    """Each series' last sample of every minute."""
    found: dict[str, list[tuple[int, float]]] = {}
    for key, points in sorted(series.items()):
        minutes: dict[int, float] = {}
        for t, v in points:
            minutes[int(t // 60)] = v
        found[key] = sorted(minutes.items())
    return found


def per_minute_p99(
    steps: dict[str, list[tuple[float, float]]],
) -> dict[str, list[tuple[float, float]]]:
    found: dict[str, list[tuple[float, float]]] = {}
    for step, points in steps.items():
        minutes: dict[int, list[float]] = {}
        for t, s in points:
            minutes.setdefault(int(t // 60), []).append(s)
        found[step] = [
            (60 * m + 30, 1000 * percentile(v, 0.99)) for m, v in sorted(minutes.items())
        ]
    return found
