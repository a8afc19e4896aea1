"""The soak's judgement (issue 21's acceptance) on synthetic samples: the warm-up is left out of
every window, a service's memory must be flat after it, a step's p99 must not drift, a snapshot
topic must not keep growing, and a run too short to show a slope is reported, not judged."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from holdem.harness.soak import (
    FLAT_MB_PER_H,
    NAMES,
    Config,
    Samples,
    figures,
    markdown,
    parse_args,
    slope_per_hour,
    verdict,
)

AUDIT = {"ok": True, "records": 10, "rounds": 2, "ended": 2, "violations": [], "seconds": 1.0}
WARMUP, MEASURED = 15 * 60, 60 * 60
SECONDS = WARMUP + MEASURED


def run(
    rss: dict[str, Any] | None = None,
    step_s: Any = None,
    snapshot_mb: Any = None,
    warmup_minutes: float = 15,
    seconds: float = SECONDS,
) -> dict[str, Any]:
    """The figures and verdict of a run sampled every 10 s; by default every service grows
    50 MB during the warm-up and is flat after it, every round takes 0.2 s and the snapshot
    topic saw-tooths between 20 and 40 MB."""
    samples = Samples(rounds=2)
    times = range(0, int(seconds) + 1, 10)
    grow = rss or {}
    for label in (*NAMES, "broker", "auditor"):
        shape = grow.get(label, lambda t: 100 + 50 * min(t, WARMUP) / WARMUP)
        samples.rss_mb[label] = [(t, shape(t)) for t in times]
    latency = step_s or (lambda t: 0.2)
    samples.steps["bet -> Dealt"] = [(t + 0.5, latency(t)) for t in times for _ in range(3)]
    size = snapshot_mb or (lambda t: 20 + 20 * ((t % 600) / 600))
    samples.topic_mb["wallet.snapshots"] = [(t, size(t)) for t in times]
    samples.topic_mb["rounds"] = [(t, t / 10) for t in times]  # an event log grows: not judged
    config = Config(warmup_minutes=warmup_minutes, out=Path("unused"))
    found = figures(config, samples, seconds, AUDIT)
    found["verdict"] = verdict(found)
    return found


def test_growth_during_the_warm_up_is_not_judged_and_a_flat_hour_passes() -> None:
    found = run()

    assert found["judged"] and found["verdict"] == [], found["verdict"]
    assert found["warmup_seconds"] == WARMUP and found["measured_seconds"] == MEASURED
    assert all(m["slope_mb_per_h"] == 0 for m in found["memory"].values())
    assert found["memory"]["wallet"]["first_mb"] == 150  # the window starts after the warm-up


def test_a_state_still_filling_after_the_warm_up_is_judged_growing() -> None:
    def filling(t: float) -> float:  # the last soak's wallet: its bounds full after 26 minutes
        return 100 + 150 * min(t, 26 * 60) / (26 * 60)

    found = run(rss={"wallet": filling}, warmup_minutes=0)

    assert found["memory"]["wallet"]["slope_mb_per_h"] > FLAT_MB_PER_H
    assert any("wallet's memory grows" in line for line in found["verdict"])
    assert run(rss={"wallet": filling}, warmup_minutes=30)["verdict"] == []


def test_a_service_that_keeps_growing_fails_and_a_growing_broker_does_not() -> None:
    def leak(t: float) -> float:
        return 100 + 10 * t / 3600  # 10 MB/h

    found = run(rss={"settlement": leak, "broker": leak})

    assert found["memory"]["settlement"]["slope_mb_per_h"] == 10.0
    assert found["memory"]["broker"]["slope_mb_per_h"] == 10.0
    assert [line for line in found["verdict"] if "memory" in line] == [
        "settlement's memory grows: 10.0 MB/h"
    ]


def test_memory_given_back_over_the_hour_is_reported_and_not_failed() -> None:
    """The live auditor of 2026-12-06: 259 MB after its catch-up, 221 MB an hour later (a floor
    falling 21.6 MB/h). Memory that falls is not memory held with the log's length."""

    def giving_back(t: float) -> float:
        return 260 - 20 * t / 3600

    found = run(rss={"auditor": giving_back})

    assert found["memory"]["auditor"]["slope_mb_per_h"] == -20.0
    assert not found["memory"]["auditor"]["flat"] and not found["memory"]["auditor"]["grows"]
    assert [line for line in found["verdict"] if "memory" in line] == []
    assert "| falls |" in markdown(found | {"commit": "x"}, [], "make soak")


def test_p99_of_the_last_ten_minutes_must_stay_within_a_fifth_of_the_first() -> None:
    def slower(t: float) -> float:
        return 0.2 if t < SECONDS - 600 else 0.25  # +25% in the last ten minutes

    found = run(step_s=slower)

    assert found["latency"]["bet -> Dealt"]["ratio"] == 1.25
    assert any("bet -> Dealt p99 drifted" in line for line in found["verdict"])
    assert run(step_s=lambda t: 0.2 if t < SECONDS - 600 else 0.23)["verdict"] == []


def test_the_first_latency_window_starts_after_the_warm_up() -> None:
    def slow_start(t: float) -> float:
        return 1.0 if t < WARMUP else 0.2

    found = run(step_s=slow_start)

    assert found["latency"]["bet -> Dealt"]["p99_first_ms"] == 200.0
    assert found["verdict"] == []


def test_a_snapshot_topic_that_keeps_growing_fails_an_event_log_does_not() -> None:
    found = run(snapshot_mb=lambda t: 20 + t / 60)  # a MB a minute: compaction is not keeping up

    assert [line.split(":")[0] for line in found["verdict"]] == ["wallet.snapshots keeps growing"]
    assert found["topics_mb"]["rounds"]["compacted"] is False


def test_a_short_run_reports_and_does_not_judge() -> None:
    found = run(warmup_minutes=0.5, seconds=120, rss={"wallet": lambda t: 100 + t})

    assert not found["judged"] and found["verdict"] == []
    assert found["memory"]["wallet"]["slope_mb_per_h"] == 3600.0
    assert "too short to judge" in markdown(found | {"commit": "x"}, [], "make soak")


def test_slope_is_least_squares_per_hour() -> None:
    assert slope_per_hour([(0, 1.0), (1800, 2.0), (3600, 3.0)]) == 2.0
    assert slope_per_hour([(0, 5.0)]) == 0.0


def test_the_slope_is_the_floors_not_moved_by_spikes_but_growth_is_seen() -> None:
    """The wallet's memory in the soak of 2026-12-06: a floor of 216 MB for the whole hour with
    transient peaks of up to 90 MB (its snapshots being built), more of them early; least
    squares over every sample read -16.8 MB/h. A floor growing 10 MB/h under the same peaks is
    judged growing."""
    peaks = {n: 90.0 - n / 5 for n in range(0, 270, 9) if n < 150}  # a 10 s sample every 90 s

    def spiky(t: float) -> float:
        return 216.0 + peaks.get(round(t / 10), 0.0)

    def spiky_growing(t: float) -> float:
        return spiky(t) + 10 * t / 3600

    assert slope_per_hour([(10.0 * n, spiky(10.0 * n)) for n in range(270)]) < -FLAT_MB_PER_H
    found = run(rss={"wallet": spiky, "settlement": spiky_growing}, warmup_minutes=0)
    assert found["memory"]["wallet"]["flat"], found["memory"]["wallet"]
    assert [line for line in found["verdict"] if "memory" in line] == [
        f"settlement's memory grows: {found['memory']['settlement']['slope_mb_per_h']} MB/h"
    ]
    assert 9.0 < found["memory"]["settlement"]["slope_mb_per_h"] < 11.0


def test_the_report_keeps_every_memory_sample_so_a_run_can_be_judged_again() -> None:
    # the sampler keeps a tenth of a MB, as the report does
    spiky = {"wallet": lambda t: round(200 + (90 if t % 300 == 0 else 0) + 8 * t / 3600, 1)}
    found = run(rss=spiky)
    kept = found["series"]["rss_mb_samples"]
    assert len(kept["wallet"]) == SECONDS // 10 + 1

    again = Samples(rounds=2)
    again.rss_mb = {label: [(t, v) for t, v in points] for label, points in kept.items()}
    judged = figures(Config(out=Path("unused")), again, SECONDS, AUDIT)

    assert judged["memory"] == found["memory"]


def test_settings_alone_make_no_log_directory(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    Config()
    parse_args(["--minutes", "1"])
    assert list(tmp_path.iterdir()) == []  # each used to leave an empty holdem-soak-* behind

    made = Config().logs()
    assert made.parent == tmp_path and made.name.startswith("holdem-soak-")
    assert Config(log_dir=tmp_path / "given").logs() == tmp_path / "given"
