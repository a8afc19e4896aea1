"""The incremental audit's saving (issue 31 item 3, ADR 041): the second period of a chain cut
at a share of the log, against one audit of the whole log, in memory.

A history of ``--rounds`` rounds (bench_replay's, three partitions, 20 ms apart) is held as
raw records. For each cut: the first period is run to the cut (untimed), then timed, in CPU
seconds of this process: the second period (the checkpoint loaded, the rest parsed and folded,
``--final``) and a whole audit (no checkpoint, every record parsed and folded, final), alternated
``--repeat`` times. Printed: each pair and their ratio, the checkpoint's size, and the medians.

    uv run --frozen python bench/bench_audit_checkpoint.py --rounds 3000 --cuts 0.5,0.9
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from bench_replay import PARTITIONS, generate

from holdem.core.contracts import dump
from holdem.core.wire.partitioning import partition_for_key
from holdem.harness.audit_checkpoint import NAME, MemorySource, Part, run_period
from holdem.harness.audit_log import Record

STEP_MS = 20
OPTIONS = {"require_ended": True, "operator": None}


class RawSource(MemorySource):
    """Records parsed as they are read, as from Kafka: the parse is part of each period's cost."""

    async def read(
        self, starts: Mapping[Part, int], stops: Mapping[Part, int]
    ) -> AsyncIterator[Record]:
        async for r in super().read(starts, stops):
            yield Record.of(r.role, r.partition, r.offset, r.raw, r.timestamp)


def history(rounds: int) -> list[Record]:
    """Unparsed records (message None), each on its player's partition."""
    offsets: Counter[tuple[str, int]] = Counter()
    records = []
    for n, (role, event) in enumerate(generate(rounds, 100)):
        partition = partition_for_key(event.player_id.encode(), PARTITIONS)
        offset = offsets[(role, partition)]
        offsets[(role, partition)] += 1
        records.append(Record(role, partition, offset, dump(event), 1_000_000 + n * STEP_MS))
    return records


async def cpu_of(source: RawSource, directory: Path | None) -> tuple[float, int]:
    started = time.process_time()
    period = await run_period(source, directory, OPTIONS, final=directory is not None)
    assert not period.new, period.new[:3]
    return time.process_time() - started, period.read


async def main(args: argparse.Namespace) -> None:
    records = history(args.rounds)
    source = RawSource(records)
    stamps = sorted(r.timestamp for r in records)
    print(f"{len(records):,} records, {args.rounds:,} rounds", flush=True)
    for cut in (float(c) for c in args.cuts.split(",")):
        ratios = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as scratch:
                directory = Path(scratch)
                until = stamps[int(cut * (len(stamps) - 1))]
                await run_period(source, directory, OPTIONS, until=until)
                size = (directory / NAME).stat().st_size
                second, read = await cpu_of(source, directory)
            whole, _ = await cpu_of(source, None)
            ratios.append(second / whole)
            print(
                f"cut {cut:.2f}: second period {second:.2f} s CPU ({read:,} records), "
                f"whole {whole:.2f} s: {second / whole:.2f} of the whole; "
                f"checkpoint {size / 2**20:.1f} MiB",
                flush=True,
            )
        print(f"cut {cut:.2f}: median {statistics.median(ratios):.2f} of the whole", flush=True)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3000)
    p.add_argument("--cuts", default="0.5,0.9", help="shares of the log the first period reads")
    p.add_argument("--repeat", type=int, default=3)
    asyncio.run(main(p.parse_known_args()[0]))
