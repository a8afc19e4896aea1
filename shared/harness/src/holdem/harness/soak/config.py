"""Soak settings and what it measures: the constants, ``Config`` and ``Samples``."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PARTITIONS = 3
NAMES = ("dealer", "wallet", "settlement")
# Processes whose memory must stay flat: the services and the live auditor (issue 31: state
# bounded in the log's length).
FLAT_JUDGED = (*NAMES, "auditor")
ANTE, BONUS = 500, 250
MIXED = ("basic", "basic-bonus", "optimal", "always-call")
STEPS = ("bet -> Dealt", "decision -> end", "round")
TABLES = 8
# What counts as an error-level line of a service's log: structlog's JSON levels, a traceback.
ERROR_LINE = re.compile(r'"level": "(error|critical)"|Traceback \(most recent call last\)')
# aiokafka's warning for a produce it sends again (the broker refused it, retriably)
RETRY_LINE = re.compile(r"retrying\. Error")
FLAT_MB_PER_H = 5.0  # a process whose fitted RSS slope stays under this is flat
FLOOR_S = 120.0  # the slope is fitted to each window's lowest sample: transient peaks left out
P99_DRIFT = 1.2  # last window's p99 within 20% of the first's
# A compacted topic is cleaned in steps (a segment closes every 10 minutes, the cleaner runs once
# half of the log is dirty), so its size is a saw-tooth: bounded when the last third's peak stays
# within this factor of the first third's.
TOPIC_GROWTH = 1.25
JUDGED_MINUTES = 30.0  # a shorter measured period cannot show a slope: memory, p99 and topic
# sizes are then reported, not judged


@dataclass(frozen=True)
class Config:
    minutes: float = 60.0  # measured, after the warm-up
    warmup_minutes: float = 15.0
    # Rounds/s: half of the 300 the services bench saturates at here (bench/bench_services.py,
    # 4,000 rounds, 512 players, on 61c9689: 300.6/s). The audit is the live auditor's streaming
    # fold, whose memory is flat in the log's length: no longer what caps the rate (issue 31).
    rate: float = 150.0
    out: Path = Path("docs/soak")
    sample_s: float = 10.0
    void_every: int = 500
    session_every: int = 100  # rounds a player plays before ending his session
    step_s: float = 60.0
    # The services', broker's and auditor's logs; none: a temporary directory made when the soak
    # starts (not when a Config is made: every `--help` and test left an empty one behind).
    log_dir: Path | None = None

    def logs(self) -> Path:
        return self.log_dir or Path(tempfile.mkdtemp(prefix="holdem-soak-"))


@dataclass
class Samples:
    """What the soak measured, each series against seconds since the load began."""

    rss_mb: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    lag: dict[str, list[tuple[float, int]]] = field(default_factory=dict)
    topic_mb: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    steps: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # (ended at, s)
    errors: list[str] = field(default_factory=list)
    produce_retries: dict[str, int] = field(default_factory=dict)
    auditor_lag_s: list[tuple[float, float]] = field(default_factory=list)
    rounds: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    not_offered: int = 0
    failures: list[str] = field(default_factory=list)
