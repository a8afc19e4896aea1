"""The live auditor's restart with and without its checkpoint (ADR 044), on logs of two lengths.

For each size: ``ROUNDS`` rounds (bench_replay's history, about 11 records a round) are written
to the game's topics of a broker of its own (no prefix). The auditor (``holdem-auditor`` as the
auditor principal, a process of its own) runs once with a checkpoint directory to the log's end
and is stopped (SIGTERM: the checkpoint is written). Then, alternately, ``--pairs`` times: a
start from scratch (no checkpoint) and a start from a copy of that checkpoint, each timed from
the process's spawn to its ``caught_up`` log line (the log's end as it was at its start), with
the records it folded and its peak RSS (VmHWM) then. Figures printed and written to ``--out``
(JSON), with the load average.

    uv run --frozen python bench/bench_auditor_resume.py --sizes 1000,4000 --pairs 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_replay import fill, generate

from holdem.core.wire.topics import Topics
from holdem.harness.auditor_service import CHECKPOINT_ENV, CHECKPOINT_NAME
from holdem.ops.create_topics import ensure_findings_topic
from holdem.ops.launcher import LocalBroker, ServiceProcess
from holdem.runtime.topic_setup import ensure_topics

OUT = Path(__file__).parent / "results" / "auditor_resume.json"
SIZES = (1_000, 4_000)  # rounds
CAUGHT_UP_S = 900.0


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--sizes", default=",".join(map(str, SIZES)), help="rounds per size")
    p.add_argument("--players", type=int, default=300)
    p.add_argument("--pairs", type=int, default=3)
    p.add_argument("--out", default=str(OUT))
    return p.parse_known_args(argv)[0]  # bench/run.py passes its own filter words too


def peak_mib(pid: int | None) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


async def start(broker: LocalBroker, work: Path, checkpoint: Path | None) -> dict[str, Any]:
    """One start of the auditor to its ``caught_up`` line; then SIGTERM."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("HOLDEM_")},
        **broker.connection("auditor").env(),
        "HOLDEM_METRICS_PORT": "0",
        "PYTHONUNBUFFERED": "1",
        **({CHECKPOINT_ENV: str(checkpoint)} if checkpoint is not None else {}),
    }
    argv = [sys.executable, "-m", "holdem.harness.auditor_service", "--checkpoint-s", "3600"]
    process = ServiceProcess("auditor", env, work / "auditor.log", argv=argv)
    spawned = time.perf_counter()
    process.start()
    try:
        while True:
            lines = [
                json.loads(line)
                for line in process.log_since_start().splitlines()
                if line.startswith("{")
            ]
            caught = [line for line in lines if line.get("event") == "caught_up"]
            if caught:
                seconds = time.perf_counter() - spawned
                refused = [line for line in lines if line.get("event") == "checkpoint_refused"]
                assert not refused, refused
                return {
                    "seconds": seconds,
                    "read": caught[0]["read"],
                    "records": caught[0]["records"],
                    "peak_mib": peak_mib(process.pid),
                }
            if not process.alive or time.perf_counter() - spawned > CAUGHT_UP_S:
                raise RuntimeError(f"no caught_up:\n{process.log_tail()}")
            await asyncio.sleep(0.05)
    finally:
        code = await process.stop()
        assert code == 0, process.log_tail()


async def measure_size(
    broker: LocalBroker, rounds: int, args: argparse.Namespace
) -> dict[str, Any]:
    admin = broker.connection("admin")
    topics = Topics()  # its own broker: no prefix (the history carries no operator header)
    await ensure_topics(admin, list(topics.names()), 3, wait=120)
    await ensure_findings_topic(admin, topics)
    await asyncio.to_thread(broker.authorize, "")
    work = Path(tempfile.mkdtemp(prefix="bench-auditor-"))
    try:
        written = (await fill(admin, topics, generate(rounds, args.players))).total()
        kept = work / "checkpoint"
        first = await start(broker, work, kept)  # to the end, then its checkpoint
        size = (kept / CHECKPOINT_NAME).stat().st_size
        scratch, resumed = [], []
        for _ in range(args.pairs):
            scratch.append(await start(broker, work, None))
            copy = work / "resume"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(kept, copy)
            resumed.append(await start(broker, work, copy))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "rounds": rounds,
        "records": first["records"],
        "written": written,
        "checkpoint_bytes": size,
        "scratch": scratch,
        "resumed": resumed,
        "load": os.getloadavg(),
    }


def line(f: dict[str, Any]) -> str:
    def median(runs: list[dict[str, Any]], key: str) -> float:
        return float(statistics.median(r[key] for r in runs))

    s, r = median(f["scratch"], "seconds"), median(f["resumed"], "seconds")
    return (
        f"{f['records']:>8,} records ({f['rounds']:,} rounds): restart to caught up, "
        f"from scratch {s:.1f}s (read {median(f['scratch'], 'read'):,.0f}, peak "
        f"{median(f['scratch'], 'peak_mib'):.0f} MiB) vs from its checkpoint {r:.1f}s (read "
        f"{median(f['resumed'], 'read'):,.0f}, peak {median(f['resumed'], 'peak_mib'):.0f} MiB, "
        f"file {f['checkpoint_bytes'] / 1024:.0f} KiB): {s / r:.1f}x; pairs "
        + ", ".join(
            f"{a['seconds']:.1f}/{b['seconds']:.1f}"
            for a, b in zip(f["scratch"], f["resumed"], strict=True)
        )
        + f"; load {', '.join(f'{x:.1f}' for x in f['load'])}"
    )


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    if os.environ.get("HOLDEM_KAFKA_BOOTSTRAP"):
        raise SystemExit("bench_auditor_resume starts its own broker (HOLDEM_KAFKA_BOOTSTRAP set)")
    results = []
    for rounds in (int(size) for size in args.sizes.split(",")):
        broker = LocalBroker()  # a log of its own per size
        broker.up()
        try:
            results.append(asyncio.run(measure_size(broker, rounds, args)))
        finally:
            broker.down()
        print(line(results[-1]), flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
