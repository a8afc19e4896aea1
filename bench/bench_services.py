"""Rounds through the three services: settled rounds/s beside a bare batched relay, step latency.

Throughput: ``--players`` players play ``--rounds`` rounds back to back (always call), through
the services (processes, each its own principal; the players as ``operator``), then the same
load through a bare aiokafka relay with the same hops and records per round (services_relay),
on the same broker. Latency: rounds started on a fixed schedule at ``--rate`` rounds/s for
``--seconds`` (open loop), each step timed as the operator's client sees it (send to read
committed). Figures printed and written to ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from produce_retries import produce_retries
from services_relay import (
    Record,
    Relay,
    check_script,
    hops_seen,
    pick_template,
    published,
    records_per_round,
    written_per_round,
)
from timeline import lines as timeline_lines
from timeline import read_committed, read_timed, timeline

from holdem.client import KafkaConnection, Operator, Player, StalledError
from holdem.client.player import last_movement
from holdem.core.contracts import CommandRejected, Settled
from holdem.core.strategy import always_call
from holdem.core.wire.topics import Topics
from holdem.harness.load import Plan, fund, percentile, play
from holdem.ops.launcher import Launcher, LocalBroker
from holdem.runtime.topic_setup import ensure_topics

PARTITIONS = 3
ROUND_ROLES = ("rounds", "wallet", "vault")  # the topics a round's records are on
PROBE_ROUNDS = 8  # played through the services to check the relay's script before measuring
OUT = Path(__file__).parent / "results" / "services.json"
# Issue 28's goals, printed beside the figures (never asserted: a loaded machine moves them):
# throughput >= 0.7x the relay's, CPU per round <= 2x, each step's p99 <= 1.25x the relay's.
GOAL_RATIO, GOAL_CPU_RATIO, GOAL_P99_RATIO = 0.7, 2.0, 1.25
STEPS = ("bet -> Dealt", "Call -> Settled", "Settled -> payout", "round")


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    add = parser.add_argument
    add("--rounds", type=int, default=4000, help="rounds per throughput run")
    add("--players", type=int, default=512, help="players at once in the throughput runs")
    add("--rate", type=float, default=100.0, help="offered rounds/s in the latency run")
    add("--seconds", type=float, default=20.0, help="length of the latency run")
    add("--out", type=Path, default=OUT)
    args, _ = parser.parse_known_args(argv)  # run.py's own arguments pass through
    return args


def kind_of(headers: Iterable[tuple[str, bytes]], value: bytes) -> str:
    """A record's type: its header, else its body's (records of a runtime without headers)."""
    kind = dict(headers).get("type")
    return kind.decode() if kind is not None else str(json.loads(value)["type"])


async def read_all(admin: KafkaConnection, topics: Topics) -> list[Record]:
    """(topic role, type, value) of every committed record on the round's topics."""
    roles = {topics.name(role): role for role in ROUND_ROLES}
    return [
        (roles[topic], kind_of(r.headers, r.value), r.value)
        for topic, r in await read_committed(admin, roles, PARTITIONS)
    ]


def incomplete(records: Iterable[Record]) -> list[str]:
    """Round ids whose bet was placed and whose records are not all there yet: not every
    (topic, type) the relay writes for a round (a called round with its payout)."""
    wanted = published()
    return sorted(
        round_id
        for round_id, kinds in written_per_round(records).items()
        if ("rounds", "round.bet_placed") in kinds and not wanted <= kinds
    )


async def converged(
    admin: KafkaConnection, topics: Topics, within_s: float = 180.0
) -> list[Record]:
    """The round's topics' records once every round a bet was placed for has all its records:
    a client's step can end (or time out) before the last records of its round are committed,
    and records counted before then undercount. RuntimeError naming rounds still incomplete
    after ``within_s``."""
    deadline = time.monotonic() + within_s
    while True:
        records = await read_all(admin, topics)
        missing = incomplete(records)
        if not missing:
            return records
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"{len(missing)} rounds still incomplete after {within_s} s: {missing[:5]}"
            )
        await asyncio.sleep(1.0)


def cpu_seconds(pids: Iterable[int | None]) -> float:
    """User + system CPU seconds used so far by the processes ``pids`` (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / ticks


async def saturate(
    operator: Operator, args: argparse.Namespace, funded: bool, pids: list[int | None]
) -> dict[str, Any]:
    """Closed loop: every player plays its next round as soon as its last one closed. The CPU
    the workers (``pids``) and this process (the players' client) spent per round is beside."""
    plan = Plan(rounds=args.rounds, players=args.players, voids=0, step_s=60.0)
    if funded:
        await fund(operator, plan)
    workers, client = cpu_seconds(pids), time.process_time()
    tally = await play(operator, plan, always_call)
    workers, client = cpu_seconds(pids) - workers, time.process_time() - client
    return {
        "workers_cpu_ms_per_round": round(1000 * workers / max(tally.rounds, 1), 2),
        "client_cpu_share": round(client / tally.seconds, 2),
        "rounds": tally.rounds,
        "seconds": round(tally.seconds, 2),
        "rounds_per_s": round(tally.rounds / tally.seconds, 1),
        "stalled": len(tally.stalled),
        "round_p50_ms": round(1000 * percentile(tally.latencies, 0.5), 1),
        "round_p99_ms": round(1000 * percentile(tally.latencies, 0.99), 1),
    }


async def timed_round(player: Player, round_id: str, times: dict[str, list[float]]) -> None:
    """One round, each step timed from its command's send to its answer read committed."""
    clock = time.monotonic
    started = clock()
    played = await player.bet(500, 250, round_id=round_id)
    try:
        await played.dealt()
        dealt = clock()
        await played.call()
        end = await played.watch.until(CommandRejected, within_s=player.step_s)
        settled = clock()
        if not isinstance(end, Settled):
            raise StalledError(f"{round_id}: ended with {end.type}")
        await played.watch.until(last_movement(end), within_s=player.step_s)
        paid = clock()
    finally:
        played.close()
    for step, seconds in zip(
        STEPS, (dealt - started, settled - dealt, paid - settled, paid - started), strict=True
    ):
        times[step].append(seconds)


async def open_loop(operator: Operator, args: argparse.Namespace, funded: bool) -> dict[str, Any]:
    """Rounds started every 1/rate s whatever the answers; a round finds a free player or is
    counted as not offered."""
    total = int(args.rate * args.seconds)
    players = max(16, int(args.rate * 3))  # 3 s of rounds in flight before a seat is missing
    plan = Plan(rounds=total, players=players, voids=0, step_s=30.0)
    if funded:
        await fund(operator, plan)
    free = [Player(operator, p, step_s=plan.step_s) for p in plan.player_ids()]
    times: dict[str, list[float]] = {step: [] for step in STEPS}
    failed: list[str] = []
    missed = 0

    async def one(player: Player, number: int) -> None:
        try:
            await timed_round(player, f"{player.player_id}-l{number:06d}", times)
        except Exception as error:  # counted and shown: the run goes on
            failed.append(f"{type(error).__name__}: {error}"[:200])
        finally:
            free.append(player)

    tasks = []
    started = time.monotonic()
    for number in range(total):
        await asyncio.sleep(max(0.0, started + number / args.rate - time.monotonic()))
        if not free:
            missed += 1
            continue
        tasks.append(asyncio.create_task(one(free.pop(), number)))
    offered_s = time.monotonic() - started
    await asyncio.gather(*tasks)
    steps = {
        step: {
            "p50_ms": round(1000 * percentile(v, 0.5), 1),
            "p99_ms": round(1000 * percentile(v, 0.99), 1),
            "n": len(v),
        }
        for step, v in times.items()
    }
    return {
        "offered_rounds_per_s": args.rate,
        "started_rounds_per_s": round(len(tasks) / offered_s, 1),
        "not_offered_no_free_player": missed,
        "failed": len(failed),
        "failures": failed[:5],
        "steps": steps,
    }


def git_head() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip()


@asynccontextmanager
async def local_broker(
    prefix: str,
) -> AsyncIterator[tuple[Mapping[str, KafkaConnection], Launcher, Path]]:
    """A local broker with the game's topics, its principals, a launcher of the services on it
    (not started) and the run's log directory; the broker is stopped at the end."""
    log_dir = Path(tempfile.mkdtemp(prefix=prefix))
    broker = LocalBroker(log_dir / "kafka")
    await asyncio.to_thread(broker.up)
    try:
        principals = broker.principals()
        await ensure_topics(principals["admin"], Topics(), PARTITIONS)
        launcher = Launcher(broker.bootstrap or "", log_dir, "", PARTITIONS, credentials=principals)
        yield principals, launcher, log_dir
    finally:
        await asyncio.to_thread(broker.down)


async def measure(broker: LocalBroker, args: argparse.Namespace, log_dir: Path) -> dict[str, Any]:
    principals = broker.principals()
    topics = Topics()
    await ensure_topics(principals["admin"], topics, PARTITIONS)
    return await compare(broker.bootstrap or "", principals, topics, args, log_dir)


async def probe(operator: Operator) -> None:
    """A few rounds through the services, so that their records can be compared with the
    relay's script before anything is measured."""
    plan = Plan(rounds=PROBE_ROUNDS, players=PROBE_ROUNDS, voids=0, step_s=60.0)
    await fund(operator, plan)
    await play(operator, plan, always_call)


async def compare(
    bootstrap: str,
    principals: Mapping[str, KafkaConnection],
    topics: Topics,
    args: argparse.Namespace,
    log_dir: Path,
) -> dict[str, Any]:
    """The services on ``topics`` (created and granted), then the relay on topics of its own,
    on the same broker: the same load, their figures and ratios. StaleRelayError before
    anything is measured if the services' rounds write records the relay does not."""
    admin = principals["admin"]
    launcher = Launcher(bootstrap, log_dir, topics.prefix, PARTITIONS, credentials=principals)
    async with launcher, Operator(principals["operator"], topics, PARTITIONS) as operator:
        await probe(operator)
        check_script(await converged(admin, topics))
        pids = [service.pid for service in launcher.services.values()]
        services = await saturate(operator, args, funded=True, pids=pids)
        print(f"services: {services}", flush=True)
        latency = await open_loop(operator, args, funded=True)
        print(f"latency: {latency}", flush=True)
        records = await converged(admin, topics)  # the services still running
        hops = timeline(await read_timed(admin, topics, PARTITIONS))
    relay_topics = Topics.unique("relay")
    await ensure_topics(admin, relay_topics, PARTITIONS)
    relay_run = Relay(admin, relay_topics, pick_template(records), log_dir)
    async with relay_run, Operator(admin, relay_topics, PARTITIONS) as operator:
        relay = await saturate(operator, args, funded=False, pids=relay_run.pids)
        print(f"relay: {relay}", flush=True)
        relay_latency = await open_loop(operator, args, funded=False)
        print(f"relay latency: {relay_latency}", flush=True)
        relay_records = await converged(admin, relay_topics)
        relay_hops = timeline(await read_timed(admin, relay_topics, PARTITIONS), decided=False)
    per_round = records_per_round(records)
    return {
        "services": services,
        "relay": relay,
        "ratio": round(services["rounds_per_s"] / max(relay["rounds_per_s"], 1e-9), 3),
        "cpu_ratio": round(
            services["workers_cpu_ms_per_round"] / max(relay["workers_cpu_ms_per_round"], 1e-9),
            3,
        ),
        "hops_per_round": hops_seen(per_round),
        "records_per_round": {"services": per_round, "relay": records_per_round(relay_records)},
        "rounds_complete": {
            "services": len(written_per_round(records)),
            "relay": len(written_per_round(relay_records)),
        },
        "latency": {"services": latency, "relay": relay_latency},
        "produce_retries": produce_retries(log_dir),
        "timeline": {"services": hops, "relay": relay_hops},
    }


def table(result: dict[str, Any]) -> str:
    hops = result.get("timeline", {"services": {}, "relay": {}})
    return "\n".join(
        [
            *throughput_lines(result),
            *latency_lines(result["latency"]),
            *timeline_lines(hops["services"], hops["relay"]),
        ]
    )


def throughput_lines(result: dict[str, Any]) -> list[str]:
    ratio_ok = "ok" if result["ratio"] >= GOAL_RATIO else "MISSED"
    cpu_ok = "ok" if result["cpu_ratio"] <= GOAL_CPU_RATIO else "MISSED"
    records = {k: sum(v.values()) for k, v in result["records_per_round"].items()}
    return [
        f"{'throughput':24} {'rounds/s':>9} {'rounds':>7} {'stalled':>7} "
        f"{'round p50':>10} {'p99':>8} {'CPU/round':>10} {'client CPU':>10}",
        *(
            f"{name:24} {x['rounds_per_s']:9.1f} {x['rounds']:7} {x['stalled']:7} "
            f"{x['round_p50_ms']:8.0f}ms {x['round_p99_ms']:6.0f}ms "
            f"{x['workers_cpu_ms_per_round']:8.2f}ms {x['client_cpu_share']:10.0%}"
            for name, x in (("services", result["services"]), ("bare relay", result["relay"]))
        ),
        f"throughput services/relay {result['ratio']:.3f} (goal >= {GOAL_RATIO}: {ratio_ok}); "
        f"CPU/round services/relay {result['cpu_ratio']:.2f} (goal <= {GOAL_CPU_RATIO}: {cpu_ok})",
        f"{result['hops_per_round']} hops and {records['services']:.2f} records a round "
        f"(relay {records['relay']:.2f})",
        "produce batches sent again (ADR 036): "
        + ", ".join(f"{name} {n}" for name, n in result.get("produce_retries", {}).items()),
    ]


def latency_lines(latency: dict[str, dict[str, Any]]) -> list[str]:
    services, relay = latency["services"], latency["relay"]
    lines = [
        f"latency, open loop at {services['offered_rounds_per_s']:.0f} rounds/s offered: "
        + "; ".join(
            f"{name} started {x['started_rounds_per_s']:.1f}/s, "
            f"{x['not_offered_no_free_player']} not offered, {x['failed']} failed"
            for name, x in (("services", services), ("relay", relay))
        ),
        f"{'step':24} {'services p50':>12} {'p99':>9} {'relay p50':>10} {'p99':>9} "
        f"{'p99 ratio':>9} (goal <= {GOAL_P99_RATIO})",
    ]
    for step, x in services["steps"].items():
        y = relay["steps"][step]
        ratio = x["p99_ms"] / max(y["p99_ms"], 1e-9)
        goal = "" if step == "round" else ("  ok" if ratio <= GOAL_P99_RATIO else "  MISSED")
        lines.append(
            f"{step:24} {x['p50_ms']:10.1f}ms {x['p99_ms']:7.1f}ms "
            f"{y['p50_ms']:8.1f}ms {y['p99_ms']:7.1f}ms {ratio:9.2f}{goal}"
        )
    return lines


async def main(args: argparse.Namespace) -> None:
    log_dir = Path(tempfile.mkdtemp(prefix="holdem-bench-services-"))
    broker = LocalBroker(log_dir / "kafka")
    await asyncio.to_thread(broker.up)
    try:
        result = await measure(broker, args, log_dir)
    finally:
        await asyncio.to_thread(broker.down)
    result = {**header("services", args, log_dir), **result}
    print(table(result))
    write(result, args.out)


def header(bench: str, args: argparse.Namespace, log_dir: Path) -> dict[str, Any]:
    """What a bench's JSON starts with: the run's commit, Python, cores, arguments and logs."""
    return {
        "bench": bench,
        "commit": git_head(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "args": {k: str(v) for k, v in vars(args).items()},
        "logs": str(log_dir),
    }


def write(result: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {out}")


if __name__ == "__main__":
    asyncio.run(main(parse_args(sys.argv[1:])))
