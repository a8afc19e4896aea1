"""The soak's verdict: what the acceptance asks that the figures do not show."""

from __future__ import annotations

from typing import Any


def verdict(found: dict[str, Any]) -> list[str]:
    """What the acceptance asks that the figures do not show (empty: the soak passed)."""
    bad = []
    if not found["audit"]["ok"]:
        bad.append(f"audit: {found['audit']['violations']}")
    if found["failures"]:
        bad.append(f"{found['failures']} rounds failed: {found['failure_examples']}")
    if found["errors"]:
        bad.append(f"{found['errors']} error lines: {found['error_lines'][:3]}")
    if found["audit"]["rounds"] != found["audit"]["ended"]:
        bad.append("rounds not ended in the log")
    if not found["judged"]:
        return bad
    for label, m in found["memory"].items():
        if m["service"] and m["grows"]:
            bad.append(f"{label}'s memory grows: {m['slope_mb_per_h']} MB/h")
    for step, s in found["latency"].items():
        if s["ratio"] is None or s["ratio"] > found["p99_drift_limit"]:
            bad.append(f"{step} p99 drifted: {s['p99_first_ms']} -> {s['p99_last_ms']} ms")
    for topic, t in found["topics_mb"].items():
        if t["compacted"] and not t["bounded"]:
            peaks = f"{t['peak_first_third_mb']} -> {t['peak_last_third_mb']} MB"
            bad.append(f"{topic} keeps growing: peak {peaks}")
    return bad
