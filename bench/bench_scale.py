"""Scale-out (issue 28 item 7): settled rounds/s with 1, 2, 4 instances of every service.

For each instance count (``SCALE_INSTANCES``, default ``1,2,4``) a fresh local broker, the game's
topics with ``--partitions`` partitions (4 by default: 4 instances get one each), the four
services with that many processes each, a few probe rounds, then ``--players`` players playing
``--rounds`` rounds back to back (closed loop, always call), as ``bench_services`` saturates.
Printed per count: rounds/s, the ratio to linear (rounds/s over count x the single instance's),
the CPU the services used per round and per second (cores busy), and the players' client's share
of a core (one process: on a small machine the load itself can be the limit). The figures say
what this machine can show, not what a service can do on one with a core per process
(``docs/sizing.md``). Printed, never asserted; written to ``--out`` (JSON).

``--snapshots R1,R2``: no broker; each snapshotted service's state for ``--snapshot-players``
players after R settled rounds each (``bench_snapshot``'s history: one round open a player), its
snapshot's bytes on the topic (the records ``holdem.runtime.snapshots`` writes) per player."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_snapshot
from bench_services import cpu_seconds, header, probe, saturate, write

from holdem.client import Operator
from holdem.core.wire.topics import Topics
from holdem.dealer import snapshot as dealer_snapshot
from holdem.dealer import state as dealer_state
from holdem.ops.launcher import Launcher, LocalBroker
from holdem.runtime.snapshots import Snapshot
from holdem.runtime.topic_setup import ensure_topics
from holdem.settlement import snapshot as settlement_snapshot
from holdem.settlement import state as settlement_state
from holdem.wallet import snapshot as wallet_snapshot
from holdem.wallet import state as wallet_state

OUT = Path(__file__).parent / "results" / "scale.json"
GOAL = 0.8  # of linear, to 4 instances (on a machine with a core per process)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    add = parser.add_argument
    add("--rounds", type=int, default=3000, help="rounds per instance count")
    add("--players", type=int, default=256, help="players at once")
    add("--partitions", type=int, default=4, help="partitions of every topic")
    add("--out", type=Path, default=OUT)
    add("--snapshots", default="", help="rounds a player (R1,R2...): snapshot sizes, no broker")
    add("--snapshot-players", type=int, default=20, help="players in the snapshot sizes")
    args, _ = parser.parse_known_args(argv)  # run.py's own arguments pass through
    return args


def instance_counts() -> list[int]:
    text = os.environ.get("SCALE_INSTANCES", "1,2,4")
    counts = [int(part) for part in text.split(",") if part.strip()]
    if not counts or min(counts) < 1:
        raise SystemExit(f"SCALE_INSTANCES must list positive counts, got {text!r}")
    return counts


async def one_count(instances: int, args: argparse.Namespace) -> dict[str, Any]:
    """The services at ``instances`` processes each on a broker of their own, saturated."""
    if instances > args.partitions:
        raise SystemExit(f"{instances} instances need {instances} partitions at least")
    log_dir = Path(tempfile.mkdtemp(prefix=f"holdem-bench-scale-{instances}-"))
    broker = LocalBroker(log_dir / "kafka")
    await asyncio.to_thread(broker.up)
    try:
        principals = broker.principals()
        topics = Topics()
        await ensure_topics(principals["admin"], topics, args.partitions)
        launcher = Launcher(
            broker.bootstrap or "",
            log_dir,
            "",
            args.partitions,
            credentials=principals,
            instances=instances,
        )
        operator = Operator(principals["operator"], topics, args.partitions)
        async with launcher, operator:
            await probe(operator)
            pids = [service.pid for service in launcher.services.values()]
            before, started = cpu_seconds(pids), time.monotonic()
            result = await saturate(operator, args, funded=True, pids=pids)
            busy = (cpu_seconds(pids) - before) / (time.monotonic() - started)
    finally:
        await asyncio.to_thread(broker.down)
    result = {"instances": instances, "services_cores_busy": round(busy, 2), **result}
    print(f"{instances} instances: {result}", flush=True)
    return result


def lines(runs: list[dict[str, Any]]) -> list[str]:
    base = next((run["rounds_per_s"] for run in runs if run["instances"] == 1), None)
    out = [
        f"{'instances':>9} {'rounds/s':>9} {'of linear':>9} {'CPU/round':>10} "
        f"{'cores busy':>10} {'client CPU':>10} {'stalled':>7}"
    ]
    for run in runs:
        linear = "" if base is None else f"{run['rounds_per_s'] / (base * run['instances']):.2f}"
        out.append(
            f"{run['instances']:9} {run['rounds_per_s']:9.1f} {linear:>9} "
            f"{run['workers_cpu_ms_per_round']:8.2f}ms {run['services_cores_busy']:10.2f} "
            f"{run['client_cpu_share']:10.0%} {run['stalled']:7}"
        )
    out.append(f"goal: {GOAL} of linear to 4 instances, on a machine with a core per process")
    out.append(f"this machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    return out


SNAPSHOTTED = (
    ("dealer", dealer_snapshot, dealer_state),
    ("wallet", wallet_snapshot, wallet_state),
    ("settlement", settlement_snapshot, settlement_state),
)


def snapshot_sizes(players: int, rounds: int) -> dict[str, tuple[float, float]]:
    """Per player, by service, after ``rounds`` rounds each: the state's bytes (the codec's) and
    the bytes on the snapshot topic (a JSON string in a record, base64 parts past 512 KiB)."""
    bench_snapshot.PLAYERS = players  # history() reads it when called
    logs = bench_snapshot.history(rounds)
    sizes = {}
    for name, codec, state_module in SNAPSHOTTED:
        state = state_module.initial_state()
        for event in logs[name]:
            state = state_module.evolve(state, event)
        offsets = {f"holdem.{role}": 10**9 for role in ("rounds", "wallet", "vault")}
        snapshot = Snapshot(name, 0, offsets, codec.dump_state(state))
        on_topic = sum(len(value) for _, value in snapshot.to_records())
        sizes[name] = len(snapshot.state) / players, on_topic / players
    return sizes


async def main(args: argparse.Namespace) -> None:
    if args.snapshots:
        for rounds in (int(part) for part in args.snapshots.split(",")):
            sizes = snapshot_sizes(args.snapshot_players, rounds)
            print(
                f"snapshot bytes per player after {rounds} rounds each "
                f"({args.snapshot_players} players): "
                + ", ".join(
                    f"{name} {state / 1000:.1f} kB ({topic / 1000:.1f} kB on the topic)"
                    for name, (state, topic) in sizes.items()
                )
            )
        return
    runs = [await one_count(instances, args) for instances in instance_counts()]
    print("\n".join(lines(runs)))
    log_dir = Path(tempfile.gettempdir())
    write({**header("scale", args, log_dir), "runs": runs}, args.out)


if __name__ == "__main__":
    asyncio.run(main(parse_args(sys.argv[1:])))
