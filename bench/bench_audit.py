"""The streaming audit's speed and memory (issue 31, ADR 040), beside a bare read.

For each size: ``ROUNDS`` rounds (about 11 records each: sealed deck, bet, deal, decision,
settlement, four or five wallet movements, round.closed) of ``--players`` players are written to
fresh topics in bulk (bench_replay's history). Then, in one child process per size: a bare read
of every topic (aiokafka, every record fetched and counted, nothing parsed), the same read with
each record parsed as the audit parses it and nothing judged (the ceiling of any audit that
validates every record with the contracts), then the streaming audit of the same topics
(``stream_partial``: parse, fold, judge), each timed, and the child's peak RSS (VmHWM: the reads
keep no record, so the peak is the audit's) and the most rounds the fold held at once.
``--workers 2`` also times ``holdem audit --workers 2``. Figures printed and written to ``--out``
(JSON).

    uv run --frozen python bench/bench_audit.py --sizes 10000,30000

``HOLDEM_BENCH_PROFILE=FILE`` writes a cProfile of the (last size's) streaming audit to FILE.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaTimeoutError
from bench_replay import PARTITIONS, fill, generate

from holdem.core import heap
from holdem.core.contracts import ContractError, parse
from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import ROLES, Topics
from holdem.harness.audit_fold import AuditFold
from holdem.harness.audit_stream import stream_partial
from holdem.ops.launcher import LocalBroker
from holdem.runtime.topic_setup import ensure_topics

OUT = Path(__file__).parent / "results" / "audit.json"
SIZES = (10_000, 30_000)  # rounds; about 110k and 330k records
GOAL = 0.5  # the audit's records/s as a share of the bare read's (issue 31)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--sizes", default=",".join(map(str, SIZES)), help="rounds per size")
    p.add_argument("--players", type=int, default=300)
    p.add_argument("--workers", type=int, default=0, help="also time holdem audit --workers N")
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--child", nargs=2, metavar=("PREFIX", "ENVFILE"), help=argparse.SUPPRESS)
    return p.parse_known_args(argv)[0]  # bench/run.py passes its own filter words too


def peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def bare_read(connection: KafkaConnection, topics: Topics, parsed: bool = False) -> int:
    """Every record of every topic the audit reads, fetched and counted; ``parsed``: each also
    parsed as the audit parses it (``holdem.core.contracts.parse`` of its topic's role), nothing
    kept and nothing judged: the most any audit that validates every record can read."""
    consumer = AIOKafkaConsumer(
        **connection.kwargs(), isolation_level="read_committed", enable_auto_commit=False
    )
    await consumer.start()
    try:
        names = [getattr(topics, role) for role in ROLES if role != "admin"]
        role_of = {getattr(topics, role): role for role in ROLES}
        tps = [TopicPartition(t, p) for t in names for p in range(PARTITIONS)]
        consumer.assign(tps)
        ends = await consumer.end_offsets(tps)
        for tp, offset in (await consumer.beginning_offsets(tps)).items():
            consumer.seek(tp, offset)
        count, pending = 0, {tp for tp, end in ends.items() if end > 0}
        while pending:
            for tp, batch in (await consumer.getmany(*pending, timeout_ms=500)).items():
                if parsed:
                    role = role_of[tp.topic]
                    for r in batch:
                        if r.offset < ends[tp]:
                            count += 1
                            try:  # noqa: SIM105 (suppress() costs a context manager a record)
                                parse(role, r.value or b"")
                            except ContractError:
                                pass  # the audit reports it; here it is read all the same
                    continue
                count += sum(1 for r in batch if r.offset < ends[tp])
            for tp in list(pending):
                if await consumer.position(tp) >= ends[tp]:
                    pending.discard(tp)
        return count
    finally:
        await consumer.stop()


async def child(prefix: str, env_file: str) -> dict[str, Any]:
    """One size's figures, in a fresh process: bare read, then the streaming audit. The process
    is tuned as `holdem audit` tunes its own (ADR 045), for both sides of the ratio."""
    heap.tune()
    connection = KafkaConnection.from_file(env_file)
    topics = Topics().with_prefix(prefix)
    started, cpu = time.perf_counter(), time.process_time()
    bare = await bare_read(connection, topics)
    bare_s, bare_cpu = time.perf_counter() - started, time.process_time() - cpu
    started, cpu = time.perf_counter(), time.process_time()
    parsed = await bare_read(connection, topics, parsed=True)
    parsed_s, parsed_cpu = time.perf_counter() - started, time.process_time() - cpu
    audit = AuditFold(require_ended=True)  # the bench's history has no operator header
    profile = os.environ.get("HOLDEM_BENCH_PROFILE")  # a cProfile of the audit to this file
    profiler = cProfile.Profile() if profile else None
    started, cpu = time.perf_counter(), time.process_time()
    if profiler is not None:
        profiler.enable()
    partial = await stream_partial(connection, topics, audit)
    audit_s, audit_cpu = time.perf_counter() - started, time.process_time() - cpu
    if profiler is not None and profile:
        profiler.disable()
        profiler.dump_stats(profile)
    report = AuditFold.merge([partial])
    return {
        "records": bare,
        "bare_per_s": bare / bare_s,
        "parsed_per_s": parsed / parsed_s,
        "parsed_per_cpu_s": parsed / parsed_cpu,
        "audit_records": report.records,
        "audit_per_s": report.records / audit_s,
        # per second of this process's CPU: what sizing needs on a machine shared with others
        "bare_per_cpu_s": bare / bare_cpu,
        "audit_per_cpu_s": report.records / audit_cpu,
        "violations": len(report.violations),
        "first_violations": report.violations[:3],
        "peak_rounds": partial["peak_rounds"],
        "peak_mb": peak_mb(),
    }


def workers_rate(env_file: str, prefix: str, workers: int, records: int) -> float | None:
    """``holdem audit --workers N``'s records/s, None if it did not give a verdict."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "holdem.harness.audit_cli", "--env-file", env_file,
         "--prefix", prefix, "--workers", str(workers)],
        check=False, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    if done.returncode not in (0, 1):
        return None
    return records / (time.perf_counter() - started)


async def create(admin: KafkaConnection, topics: Topics) -> None:
    """The game's topics (no snapshot topics), tried again while a loaded broker is slow."""
    for attempt in range(4):
        try:
            await ensure_topics(admin, list(topics.names()), PARTITIONS, wait=120)
            return
        except KafkaTimeoutError:
            if attempt == 3:
                raise


async def measure(broker: LocalBroker, args: argparse.Namespace) -> list[dict[str, Any]]:
    admin = broker.connection("admin")
    env_file = Path(broker.clients_dir) / "admin.env"
    results = []
    for rounds in (int(size) for size in args.sizes.split(",")):
        topics = Topics.unique("bench-audit")
        await create(admin, topics)
        started = time.perf_counter()
        written = (await fill(admin, topics, generate(rounds, args.players))).total()
        took = time.perf_counter() - started
        print(f"wrote {written:,} records ({rounds:,} rounds) in {took:.0f}s", flush=True)
        out = (
            await asyncio.to_thread(
                subprocess.run,
                [sys.executable, __file__, "--child", topics.prefix, str(env_file)],
                check=True, capture_output=True, text=True,
            )
        ).stdout  # fmt: skip
        figures = {"rounds": rounds, **json.loads(out.strip().splitlines()[-1])}
        if args.workers > 1:
            rate = await asyncio.to_thread(
                workers_rate, str(env_file), topics.prefix, args.workers, figures["records"]
            )
            figures[f"workers_{args.workers}_per_s"] = rate
        results.append(figures)
        print(line(figures), flush=True)
    return results


def line(f: dict[str, Any]) -> str:
    ratio = f["audit_per_s"] / f["bare_per_s"]
    text = (
        f"{f['records']:>10,} records: bare read {f['bare_per_s']:>9,.0f}/s, streaming audit "
        f"{f['audit_per_s']:>8,.0f}/s ({ratio:.2f}x, goal {GOAL}x), peak {f['peak_mb']:.0f} MiB, "
        f"{f['peak_rounds']:,} rounds held at most, {f['violations']} violations; "
        f"per CPU second: bare {f.get('bare_per_cpu_s', 0):,.0f}, "
        f"audit {f.get('audit_per_cpu_s', 0):,.0f}"
    )
    extra = [
        f"{k.split('_')[1]} workers " + ("failed" if v is None else f"{v:,.0f}/s")
        for k, v in f.items()
        if "workers_" in k
    ]
    text += f"; {', '.join(extra)}" if extra else ""
    if "parsed_per_s" not in f:  # a result written before the parse floor was measured
        return text
    floor = f["parsed_per_s"] / f["bare_per_s"]
    return text + (
        f"\n{'':>10} read and parsed, nothing judged: {f['parsed_per_s']:>9,.0f}/s "
        f"({floor:.2f}x the bare read; per CPU second {f['parsed_per_cpu_s']:,.0f}): the most "
        "any audit that validates every record with the contracts can read here"
    )


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    if args.child:
        print(json.dumps(asyncio.run(child(*args.child))))
        return
    external = os.environ.get("HOLDEM_KAFKA_BOOTSTRAP")
    if external:
        raise SystemExit("bench_audit starts its own broker (HOLDEM_KAFKA_BOOTSTRAP is set)")
    broker = LocalBroker()
    broker.up()
    try:
        results = asyncio.run(measure(broker, args))
    finally:
        broker.down()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
