"""The soak report's Markdown page (``README.md`` in ``--out``)."""

from __future__ import annotations

from typing import Any


def markdown(found: dict[str, Any], plots: list[str], command: str) -> str:
    lines = [
        "# Soak report",
        "",
        f"`{command}` on {found['commit']}: {found['warmup_seconds'] / 60:.1f} minutes of "
        f"warm-up, then {found['measured_seconds'] / 60:.1f} minutes measured; "
        f"{found['rounds']} rounds in all ({found['rounds_per_s']}/s, offered "
        f"{found['config']['rate']}/s, {found['not_offered']} not offered), "
        f"outcomes {found['outcomes']}.",
        "",
        f"Verdict: **{'passed' if not found['verdict'] else 'FAILED'}**"
        + ("" if found["judged"] else " (too short to judge memory, p99 and topic sizes)")
        + "".join(f"\n- {v}" for v in found["verdict"]),
        "",
        f"## Memory (measured period; slope fitted over its last three quarters, to each two "
        f"minutes' lowest sample; flat: within "
        f"{found['flat_threshold_mb_per_h']} MB/h either way; growth is judged, for the services)",
        "",
        "| process | service | first MB | last MB | max MB | slope MB/h | memory |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, m in found["memory"].items():
        lines.append(
            f"| {label} | {'yes' if m['service'] else 'no'} | {m['first_mb']} | {m['last_mb']} "
            f"| {m['max_mb']} | {m['slope_mb_per_h']} | {_trend(m)} |"
        )
    lines += [
        "",
        f"## Latency (first and last sixth of the measured period; drift limit "
        f"{found['p99_drift_limit']})",
        "",
        "| step | p50 ms | p99 first ms | p99 last ms | last/first | rounds |",
        "|---|---|---|---|---|---|",
    ]
    for step, s in found["latency"].items():
        lines.append(
            f"| {step} | {s['p50_ms']} | {s['p99_first_ms']} | {s['p99_last_ms']} | "
            f"{s['ratio']} | {s['n']} |"
        )
    audit = found["audit"]
    lines += [
        "",
        "## Lag, topics, errors, audit",
        "",
        f"- Maximum consumer lag (records): {found['max_lag']}",
        "- Topics on disk (MB, first and last sample): "
        + ", ".join(
            f"{t} {s['first_mb']} -> {s['last_mb']}" for t, s in found["topics_mb"].items()
        ),
        f"- Compacted (snapshot) topics, peak of the measured period's first and last third "
        f"(bounded: within {found['topic_growth_limit']}x): "
        + ", ".join(
            f"{t} {s['peak_first_third_mb']} -> {s['peak_last_third_mb']} MB "
            f"({'bounded' if s['bounded'] else 'GROWING'})"
            for t, s in found["topics_mb"].items()
            if s["compacted"]
        ),
        f"- Error-level log lines: {found['errors']}"
        + "".join(f"\n  - `{e}`" for e in found["error_lines"]),
        f"- Produce requests sent again after a retriable refusal: {found['produce_retries']}",
        f"- Failed rounds: {found['failures']}",
        f"- Services that exited and were restarted (label:exit code): {found.get('exits', {})}, "
        f"seconds to ready again: {found.get('restart_to_ready_s', [])}",
        f"- Audit ({audit.get('by', 'read after the run')}): {audit['records']} records, "
        f"{audit['rounds']} rounds, {audit['ended']} ended, {len(audit['violations'])} "
        f"violations; at the log's end {audit['seconds']} s after the load"
        + (f"\n  - {audit['line']}" if audit.get("line") else ""),
        f"- The live auditor's largest lag: {found['max_lag'].get('auditor')} records, "
        f"{found.get('auditor_max_lag_s')} s",
        "",
        *[f"![{p}]({p})" for p in plots],
        "",
    ]
    return "\n".join(lines)


def _trend(memory: dict[str, Any]) -> str:
    if memory["grows"]:
        return "GROWS"
    return "flat" if memory["flat"] else "falls"
