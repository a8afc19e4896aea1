"""The streaming audit's memory as the log grows (issue 31 item 1), without a broker: for each
size, a fresh process generates bench_replay's history (100 players, three partitions, 20 ms
apart), parses each record and folds it at once (nothing else holds the records), and prints its
peak RSS (VmHWM), the most rounds the fold held at once and the windows' fill.

    uv run --frozen python bench/bench_audit_memory.py --sizes 3000,10000,30000,100000

``--every N`` also prints, every N records of a size, the RSS now and the peak so far (a curve
from one long run: ``--sizes 1000000 --every 1000000`` gives ten points up to 10 M records).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from bench_replay import PARTITIONS, generate

from holdem.core.contracts import dump
from holdem.core.wire.partitioning import partition_for_key
from holdem.harness.audit_fold import AuditFold
from holdem.harness.audit_log import Record

STEP_MS = 20


def peak_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def rss_mib() -> tuple[float, float]:
    """(RSS now, peak RSS) of this process, MiB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def child(rounds: int, players: int, every: int = 0) -> None:
    fold = AuditFold()
    offsets: Counter[tuple[str, int]] = Counter()
    started = time.process_time()
    for n, (role, event) in enumerate(generate(rounds, players)):
        partition = partition_for_key(event.player_id.encode(), PARTITIONS)
        offset = offsets[(role, partition)]
        offsets[(role, partition)] += 1
        fold.feed(Record.of(role, partition, offset, dump(event), 1_000_000 + n * STEP_MS))
        if every and (n + 1) % every == 0:
            now, peak = rss_mib()
            print(
                f"  {n + 1:>12,} records: RSS {now:6.0f} MiB, peak {peak:6.0f} MiB, "
                f"{len(fold.pending)} rounds held, {time.process_time() - started:.0f} s CPU",
                flush=True,
            )
    held, windows = fold.peak, len(fold.judged) + len(fold.watches.event_ids.seen)
    report = fold.report()
    print(
        f"{report.records:>10,} records: peak RSS {peak_mib():6.0f} MiB, {held} rounds held at "
        f"most, windows {windows:,} keys (judged rounds + event ids), "
        f"{len(report.violations)} violations, {time.process_time() - started:.0f} s CPU",
        flush=True,
    )


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--sizes", default="3000,10000,30000,100000", help="rounds per size")
    p.add_argument("--players", type=int, default=100)
    p.add_argument("--every", type=int, default=0, help="print RSS every N records")
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = p.parse_known_args()[0]
    if args.child:
        child(args.child, args.players, args.every)
    else:
        for size in (int(s) for s in args.sizes.split(",")):
            cmd = [sys.executable, __file__, "--child", str(size), "--players", str(args.players)]
            cmd += ["--every", str(args.every)]
            subprocess.run(cmd, check=True)
