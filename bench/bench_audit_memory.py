"""The streaming audit's memory as the log grows (issue 31 item 1), without a broker: for each
size, a fresh process generates bench_replay's history (100 players, three partitions, 20 ms
apart), parses each record and folds it at once (nothing else holds the records), and prints its
peak RSS (VmHWM), the most rounds the fold held at once and the windows' fill.

    uv run --frozen python bench/bench_audit_memory.py --sizes 3000,10000,30000,100000
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


def child(rounds: int, players: int) -> None:
    fold = AuditFold()
    offsets: Counter[tuple[str, int]] = Counter()
    started = time.process_time()
    for n, (role, event) in enumerate(generate(rounds, players)):
        partition = partition_for_key(event.player_id.encode(), PARTITIONS)
        offset = offsets[(role, partition)]
        offsets[(role, partition)] += 1
        fold.feed(Record.of(role, partition, offset, dump(event), 1_000_000 + n * STEP_MS))
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
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = p.parse_known_args()[0]
    if args.child:
        child(args.child, args.players)
    else:
        for size in (int(s) for s in args.sizes.split(",")):
            cmd = [sys.executable, __file__, "--child", str(size), "--players", str(args.players)]
            subprocess.run(cmd, check=True)
