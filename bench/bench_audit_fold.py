"""The streaming audit's CPU cost per record in memory, no broker (issue 31 item 1): bench_replay's
history generated and dumped first (not timed), then ``Record.of`` of every record (the parse)
and ``AuditFold.feed`` of every parsed record plus ``report`` (the fold) ``--passes`` times over
the same records, each timed in CPU time (``process_time``: the machine may be shared). Prints
CPU µs a record (the fold's best and median pass), the load average, the violations' count and a
digest of their text.

    uv run --frozen python bench/bench_audit_fold.py --rounds 3000 --passes 3

Two versions of the audit's code compare on one history: ``--history FILE`` keeps the records
generated the first time (the decks are random) and reads them after; run one version with its
``holdem/harness`` first on ``PYTHONPATH``. ``--mutate SEED`` drops, repeats, cuts short or
changes about 1% of the records first (the same ones for a seed), so that the digests compare
findings, not two empty lists. ``--profile FILE`` writes a cProfile of the first pass to FILE.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import json
import os
import random
import statistics
import time
from collections import Counter
from pathlib import Path

from bench_replay import PARTITIONS, generate

from holdem.core.contracts import dump
from holdem.core.wire.partitioning import partition_for_key
from holdem.harness.audit import AuditReport
from holdem.harness.audit_fold import AuditFold
from holdem.harness.audit_log import Record

STEP_MS = 20
Raw = tuple[str, int, int, bytes, int]  # role, partition, offset, value, timestamp


def history(rounds: int, players: int) -> list[Raw]:
    offsets: Counter[tuple[str, int]] = Counter()
    out = []
    for n, (role, event) in enumerate(generate(rounds, players)):
        partition = partition_for_key(event.player_id.encode(), PARTITIONS)
        offset = offsets[(role, partition)]
        offsets[(role, partition)] += 1
        out.append((role, partition, offset, dump(event), 1_000_000 + n * STEP_MS))
    return out


def kept(path: Path, rounds: int, players: int) -> list[Raw]:
    """The history in ``path`` (JSON lines), written there first if it is not."""
    if not path.exists():
        lines = (json.dumps([*r[:3], r[3].decode(), r[4]]) for r in history(rounds, players))
        path.write_text("\n".join(lines) + "\n")
    out = []
    for line in path.read_text().splitlines():
        role, partition, offset, raw, timestamp = json.loads(line)
        out.append((role, partition, offset, raw.encode(), timestamp))
    return out


def mutate(records: list[Raw], seed: int) -> list[Raw]:
    """About 1% of the records dropped, repeated, cut short or with an amount changed."""
    rng = random.Random(seed)
    out: list[Raw] = []
    for role, partition, offset, raw, ts in records:
        roll = rng.random()
        if roll < 0.0025:
            continue
        if roll < 0.005:
            out.append((role, partition, offset, raw, ts))
        elif roll < 0.0075:
            raw = raw[: len(raw) // 2]
        elif roll < 0.01:
            raw = raw.replace(b'"amount":', b'"amount":1', 1).replace(b'"ante":', b'"ante":1', 1)
        out.append((role, partition, offset, raw, ts))
    return out


def folded(records: list[Record], profile: cProfile.Profile | None) -> tuple[float, AuditReport]:
    """One pass: CPU seconds of feeding every record and the report."""
    gc.collect()
    audit = AuditFold()
    started = time.process_time()
    if profile is not None:
        profile.enable()
    for record in records:
        audit.feed(record)
    report = audit.report()
    if profile is not None:
        profile.disable()
    return time.process_time() - started, report


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3000)
    p.add_argument("--players", type=int, default=100)
    p.add_argument("--passes", type=int, default=3)
    p.add_argument("--history", type=Path, help="keep the history here (JSON lines)")
    p.add_argument("--mutate", type=int, help="seed of the records' mutations")
    p.add_argument("--profile", help="write a cProfile of the first pass to this file")
    args = p.parse_args()
    if args.history:
        raws = kept(args.history, args.rounds, args.players)
    else:
        raws = history(args.rounds, args.players)
    if args.mutate is not None:
        raws = mutate(raws, args.mutate)
    started = time.process_time()
    records = [Record.of(*raw) for raw in raws]
    parsed = (time.process_time() - started) / len(records) * 1e6
    times = []
    for n in range(args.passes):
        profile = cProfile.Profile() if args.profile and n == 0 else None
        seconds, report = folded(records, profile)
        times.append(seconds / len(records) * 1e6)
        if profile is not None:
            profile.dump_stats(args.profile)
    digest = hashlib.sha256("\n".join(report.violations).encode()).hexdigest()[:16]
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"{len(records):,} records: parse {parsed:.2f} µs, fold {min(times):.2f} µs best, "
        f"{statistics.median(times):.2f} median of {len(times)}, CPU a record (load {load}); "
        f"{report.rounds} rounds, {len(report.violations)} violations ({digest})"
    )


if __name__ == "__main__":
    main()
