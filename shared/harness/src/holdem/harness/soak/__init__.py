"""`make soak`: the three services under a steady open-loop load for an hour (issue 21 item 1).

A broker of its own and the dealer, wallet and settlement, each its own principal. Rounds start
on a fixed schedule (``--rate`` a second, whatever the answers; a round that finds no free
player is counted as not offered), by players with mixed strategies, half of them with an AA
Bonus, at tables of their own whose sessions they end every so often; the operator voids one
round in ``--void-every``. Every ``--sample-s`` seconds it samples each process's resident
memory (the broker's too), the consumer lag of each service's group (committed offsets against
the log's ends, read as admin), the size on disk of every topic (the compacted snapshot topics
among them), and the error-level lines the services logged. Each round's steps are timed as the
operator's client sees them.

The hour is measured after ``--warmup-minutes`` of the same load: the services' state is bounded
(ADR 010) but starts empty, and it fills to its bounds as every player reaches the rounds and
command ids the wallet keeps of him (his last 512 commands: players x 512 / rate seconds, 12.8
minutes at any rate, the players being 1.5 x the rate). Memory that grows until then is the
bound being reached, not a leak; what the soak judges is whether anything still grows once it is
reached.

The live auditor (``holdem-auditor``, its own read-only principal, ADR 044's checkpoint in the
run's logs) folds every record as it is written, warm-up included; its memory and lag are
sampled with the services'. At the end it is waited for at the log's end and stopped, and its
fold's verdict over the whole log (read from the checkpoint it writes when stopped) is the
soak's audit. Then a report
(``soak.json``, ``README.md`` and PNG plots in ``--out``) with the memory slope of each process
over the last three quarters of the measured hour (45 minutes; fitted to each two minutes'
lowest sample, so that transient peaks do not tilt it), the p99 of its first and last
sixth (ten minutes each), the snapshot topics' sizes, the maximum lag, the errors and the audit.
Exits 1 when the audit finds a violation or the auditor does not reach the log's end, a round
stalls or fails, a service ends or logs an error, or (for a measured period of at least
``JUDGED_MINUTES``) the memory of a service or of the auditor grows, a step's p99 drifts
past the limit or a snapshot topic keeps growing.

The package by job: ``config`` (settings and what is measured), ``load`` (the open-loop load),
``sampling`` (memory, lag, topic sizes, error lines), ``statistics`` (slopes, peaks, p99s),
``verdict``, ``plots``, ``report`` (the Markdown page) and ``run`` (``soak`` and ``main``).
"""

from __future__ import annotations

from holdem.harness.soak.config import (
    ANTE,
    BONUS,
    ERROR_LINE,
    FLAT_JUDGED,
    FLAT_MB_PER_H,
    JUDGED_MINUTES,
    MIXED,
    NAMES,
    P99_DRIFT,
    PARTITIONS,
    RETRY_LINE,
    STEPS,
    TABLES,
    TOPIC_GROWTH,
    Config,
    Samples,
)
from holdem.harness.soak.load import Load
from holdem.harness.soak.plots import plot
from holdem.harness.soak.report import markdown
from holdem.harness.soak.run import git_head, main, parse_args, soak, table_terms
from holdem.harness.soak.sampling import Sampler, group_lags, rss_mb, topic_sizes
from holdem.harness.soak.statistics import (
    figures,
    peak,
    per_minute_last,
    per_minute_p99,
    slope_per_hour,
)
from holdem.harness.soak.verdict import verdict

__all__ = [
    "ANTE", "BONUS", "ERROR_LINE", "FLAT_JUDGED", "FLAT_MB_PER_H", "JUDGED_MINUTES", "MIXED",
    "NAMES", "P99_DRIFT", "PARTITIONS", "RETRY_LINE", "STEPS", "TABLES", "TOPIC_GROWTH", "Config",
    "Load", "Sampler", "Samples", "figures", "git_head", "group_lags", "main", "markdown",
    "parse_args", "peak", "per_minute_last", "per_minute_p99", "plot", "rss_mb", "slope_per_hour",
    "soak", "table_terms", "topic_sizes", "verdict",
]  # fmt: skip
