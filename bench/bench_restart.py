"""Restart-to-ready and RSS per service after 10k, 100k and 1M rounds of history.

For each history size: the rounds of ``--players`` players with mixed strategies are written
onto fresh topics in bulk (bench_replay's events, sealed with the launcher's vault key), with
each service's consumer group committed at the end of its inputs, as the services would have
left it. Baseline: a bare read of each service's state topics (the runtime's replay with a
no-op apply). Then each service is started alone through the Launcher (no snapshot yet: the
cold, full-replay figure, whose events/s is set beside the bare read), a little live traffic
makes every service snapshot every partition, and each service is killed (-9) and started
again: kill -> ready and start -> ready seconds, events replayed, and RSS (VmRSS once ready,
VmHWM). Figures printed and written to ``--out`` (JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import sys
import tempfile
import time
import uuid
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.structs import OffsetAndMetadata
from bench_replay import ANTE, VAULT, fill, generate
from bench_services import header, write

from holdem.client import KafkaConnection, Operator, Player, StalledError
from holdem.core.strategy import always_call, basic
from holdem.core.wire.partitioning import partition_for_key
from holdem.core.wire.topics import Topics, snapshot_topic
from holdem.ops import acl
from holdem.ops.launcher import SERVICES, Launcher, LaunchError, LocalBroker, ServiceProcess
from holdem.runtime.replay import replay
from holdem.runtime.snapshots import Snapshot, latest
from holdem.runtime.topic_setup import ensure_topics

PARTITIONS = 3
OUT = Path(__file__).parent / "results" / "restart.json"
SIZES = (10_000, 100_000)  # and 1_000_000 with --sizes: over an hour on 2 cores (ADR 013)
# A strategy and an AA Bonus stake per player, in turn: folds and calls, with and without bonus.
MIXED = ((basic, 250), (always_call, 0), (basic, 0), (always_call, 250))
# The launcher's vault key ring, with VAULT's key: the dealer opens the decks the bench sealed.
VAULT_KEYS = "bench:" + base64.b64encode(bytes(32)).decode()
# Each service's inputs and the roles it folds (its Spec's inputs and state_roles).
INPUTS = {
    "wallet": ("commands", "rounds", "admin"),
    "dealer": ("commands", "rounds"),
    "settlement": ("rounds",),
    "query": ("rounds", "wallet"),  # and its queries: none in the history
}
STATE = {
    "wallet": ("wallet", "rounds"),
    "dealer": ("rounds", "vault"),
    "settlement": ("rounds",),
    "query": ("rounds", "wallet"),
}
GOAL_READY_S, GOAL_RSS_MB, GOAL_REPLAY = 5.0, 300.0, 0.5
GOAL_TWIN_S = 6.0 + 2.0  # issue 26: the session timeout (HOLDEM_SESSION_TIMEOUT_MS) + 2 s
COLD_WITHIN_S = 3600.0


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    add = parser.add_argument
    add("--sizes", default=",".join(map(str, SIZES)), help="rounds of history, comma-separated")
    # A player with full windows (ADR 010) is about 38 KB of a service's snapshot; a partition's
    # snapshot beyond 512 KiB is written in parts (ADR 019).
    add("--players", type=int, default=300, help="players the history is dealt to")
    add("--snapshot-interval", type=float, default=2.0, help="HOLDEM_SNAPSHOT_INTERVAL_S")
    add("--out", type=Path, default=OUT)
    add("--twin-only", action="store_true", help="skip the kill -> ready restarts (twins only)")
    args, _ = parser.parse_known_args(argv)  # run.py's own arguments pass through
    args.sizes = [int(size.replace("_", "")) for size in args.sizes.split(",") if size]
    return args


def group_of(topics: Topics, service: str) -> str:
    """The service's consumer group (holdem.runtime.loop.ServiceLoop.group_id)."""
    scope = f"{topics.prefix}." if topics.prefix else ""
    return f"{scope}holdem-{service}"


async def commit_inputs(admin: KafkaConnection, topics: Topics) -> None:
    """Each service's group at the end of its inputs: the services handled all the history."""
    for service, roles in INPUTS.items():
        consumer = AIOKafkaConsumer(
            **admin.kwargs(), group_id=group_of(topics, service), enable_auto_commit=False
        )
        await consumer.start()
        try:
            tps = [TopicPartition(getattr(topics, r), p) for r in roles for p in range(PARTITIONS)]
            consumer.assign(tps)
            ends = await consumer.end_offsets(tps)
            await consumer.commit({tp: OffsetAndMetadata(end, "") for tp, end in ends.items()})
        finally:
            await consumer.stop()


async def bare_read(admin: KafkaConnection, topics: Topics, service: str) -> dict[str, Any]:
    """The baseline: the service's state topics read to their end, nothing done per record."""
    names = [getattr(topics, role) for role in STATE[service]]
    started = time.perf_counter()
    count = await replay(admin, names, range(PARTITIONS), lambda *_: None, timeout_s=COLD_WITHIN_S)
    seconds = time.perf_counter() - started
    return {"events": count, "seconds": round(seconds, 2), "events_per_s": round(count / seconds)}


def memory_mb(pid: int | None) -> dict[str, float]:
    """VmRSS and VmHWM (peak RSS) of a process, MB (Linux /proc)."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return {k: round(int(fields[k].split()[0]) / 1024, 1) for k in ("VmRSS", "VmHWM")}


def line_time(line: str) -> float | None:
    """The time a log line gives: faststream's ``2026-01-01 10:00:00,123`` prefix (local time)
    or a structlog record's ``timestamp`` (UTC)."""
    if line.startswith("{"):
        with contextlib.suppress(ValueError):
            return datetime.fromisoformat(json.loads(line)["timestamp"]).timestamp()
        return None
    with contextlib.suppress(ValueError):
        return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()
    return None


def phases(service: ServiceProcess, start_to_ready: float, replay_s: float) -> dict[str, float]:
    """start -> ready in three parts, from the log since this start: the process until its first
    log line (imports, settings), then until the replay begins (the duplicate-id check and the
    group join, which wait out a killed predecessor's session), and the replay."""
    with service.log_path.open("rb") as log:
        log.seek(service._log_offset)
        lines = log.read().decode("utf-8", errors="replace").splitlines()
    started = float(lines[0].rsplit(" at ", 1)[1])  # the launcher's marker line
    stamps = [stamp for line in lines[1:] if (stamp := line_time(line)) is not None]
    boot = stamps[0] - started if stamps else 0.0
    return {
        "boot_s": round(boot, 2),
        "group_s": round(max(start_to_ready - boot - replay_s, 0.0), 2),
        "replay_s": replay_s,
    }


def split_of(replayed: dict[str, Any]) -> dict[str, Any]:
    """The rebuild's own split of its seconds (its "replayed" log line): the snapshots read and
    decoded, the log's tail folded, the book read again."""
    return {key: replayed[key] for key in ("snapshot_s", "tail_s", "book_s") if key in replayed}


def ready_figures(service: ServiceProcess, start_to_ready: float) -> dict[str, Any]:
    replayed = service.replays()[-1]
    seconds = float(replayed.get("seconds", 0.0))
    events = int(replayed.get("events", 0))
    return {
        "start_to_ready_s": round(start_to_ready, 2),
        **phases(service, start_to_ready, seconds),
        "events_replayed": events,
        "replay_events_per_s": round(events / seconds) if seconds > 0 else None,
        "snapshots_loaded": replayed.get("snapshots"),
        **split_of(replayed),
        **memory_mb(service.pid),
    }


async def cold_start(launcher: Launcher, name: str) -> dict[str, Any]:
    """The first start, alone: no snapshot, the whole history replayed."""
    service = launcher.services[name]
    service.start()
    try:
        return ready_figures(service, await service.wait_ready(COLD_WITHIN_S))
    except LaunchError as error:
        return {"failed": str(error).splitlines()[0], "log_tail": service.log_tail(8)}


async def restart(launcher: Launcher, name: str) -> dict[str, Any]:
    """kill -9, start again at once, wait until ready."""
    service = launcher.services[name]
    service.kill()
    killed = time.monotonic()
    service.start()
    figures = ready_figures(service, await service.wait_ready())
    return {"kill_to_ready_s": round(time.monotonic() - killed, 2), **figures}


def owned(service: ServiceProcess) -> set[int]:
    """The partitions of the instance's last rebuild since its start."""
    replays = service.replays()
    return set(replays[-1]["partitions"]) if replays else set()


def split(first: ServiceProcess, second: ServiceProcess) -> bool:
    """Whether the two instances' last rebuilds split the partitions between them."""
    a, b = owned(first), owned(second)
    return bool(a and b) and not a & b and a | b == set(range(PARTITIONS))


async def twin_handover(launcher: Launcher, name: str) -> dict[str, Any]:
    """A second instance beside the first, the first killed -9: seconds until the second has
    rebuilt every partition, and where they go (the dead member's session, then the group's
    rebalance and join, then the rebuild). The first is started again afterwards and the
    second stopped, so the next service's figures start from one instance each."""
    first = launcher.services[name]
    label, _ = await launcher.add(name)
    second = launcher.services[label]
    whole = list(range(PARTITIONS))
    deadline = time.monotonic() + COLD_WITHIN_S
    while not split(first, second):
        if time.monotonic() > deadline:
            return {"failed": "the two instances never split the partitions"}
        await asyncio.sleep(0.1)
    before = len(second.replays())
    first.kill()
    killed = time.monotonic()
    while not any(r.get("partitions") == whole for r in second.replays()[before:]):
        if time.monotonic() > deadline or not second.alive:
            return {"failed": "the second instance never rebuilt every partition"}
        await asyncio.sleep(0.02)
    seconds = time.monotonic() - killed
    replayed = [r for r in second.replays()[before:] if r.get("partitions") == whole][-1]
    replay_s = float(replayed.get("seconds", 0.0))
    await launcher.retire(label)
    first.start()
    await first.wait_ready()
    return {
        "kill_to_all_partitions_s": round(seconds, 2),
        "session_and_join_s": round(seconds - replay_s, 2),
        "replay_s": round(replay_s, 2),
        **split_of(replayed),
        "events_replayed": int(replayed.get("events", 0)),
        # ADR 043: the partitions it held before kept, the dead twin's rebuilt (a runtime
        # before it logged no "rebuilt": every partition was).
        "rebuilt": list(replayed.get("rebuilt", whole)),
        "kept": list(replayed.get("kept", [])),
    }


def players_per_partition(players: int) -> list[str]:
    """One history player on each partition (the generator's names)."""
    width = len(str(players - 1))
    found: dict[int, str] = {}
    for n in range(players):
        name = f"p{n:0{width}d}"
        found.setdefault(partition_for_key(name.encode(), PARTITIONS), name)
    return [found[p] for p in sorted(found)]


async def play_round(operator: Operator, player_id: str) -> None:
    """One live round of a history player (call), to its last money movement."""
    player = Player(operator, player_id, step_s=60.0)
    played = await player.bet(ANTE, 0, round_id=f"{player_id}-live-{uuid.uuid4().hex[:8]}")
    await played.dealt()
    await played.call()
    if (await played.outcome()).settled is None:
        raise LaunchError(f"live round {played.round_id} was voided")


async def snapshots_cover(admin: KafkaConnection, topics: Topics, ends: dict[str, int]) -> bool:
    """Every service has a snapshot of every partition at or past the history's end offsets."""
    for service in SERVICES:
        found = await latest(admin, snapshot_topic(topics, service), list(range(PARTITIONS)))
        for partition in range(PARTITIONS):
            if partition not in found:
                return False
            offsets = Snapshot.from_bytes(found[partition], service, partition).offsets
            for role in STATE[service]:
                topic = getattr(topics, role)
                if offsets.get(topic, -1) < ends.get(f"{topic}/{partition}", 0):
                    return False
    return True


async def end_offsets(admin: KafkaConnection, topics: Topics) -> dict[str, int]:
    consumer = AIOKafkaConsumer(**admin.kwargs(), isolation_level="read_committed")
    await consumer.start()
    try:
        tps = [
            TopicPartition(getattr(topics, r), p)
            for r in ("rounds", "wallet", "vault")
            for p in range(PARTITIONS)
        ]
        return {
            f"{tp.topic}/{tp.partition}": o for tp, o in (await consumer.end_offsets(tps)).items()
        }
    finally:
        await consumer.stop()


async def snapshot_history(
    launcher: Launcher, principals: dict[str, KafkaConnection], topics: Topics, players: int
) -> int:
    """Live rounds, one per partition at a time, until every service has snapshotted every
    partition past the history; the rounds played."""
    admin = principals["admin"]
    ends = await end_offsets(admin, topics)
    played = 0
    async with Operator(principals["operator"], topics, PARTITIONS) as operator:
        deadline = time.monotonic() + 120.0
        while not await snapshots_cover(admin, topics, ends):
            if time.monotonic() > deadline:
                raise LaunchError("no snapshot covering the history after 120 s of live rounds")
            dead = [s for s in launcher.services.values() if not s.alive]
            if dead:  # e.g. a snapshot above the producer's 1 MB request limit: status 70
                raise LaunchError(f"{dead[0].name} exited:\n{dead[0].log_tail(4)}")
            await asyncio.gather(*(play_round(operator, p) for p in players_per_partition(players)))
            played += PARTITIONS
            await asyncio.sleep(1.0)
    return played


async def measure_size(
    broker: LocalBroker, args: argparse.Namespace, rounds: int, log_dir: Path
) -> dict[str, Any]:
    principals = broker.principals()
    admin = principals["admin"]
    topics = Topics.unique(f"restart{rounds}")
    await ensure_topics(admin, topics, PARTITIONS)
    await acl.apply(admin, acl.plan(topics.prefix))  # each service's principal, these topics
    started = time.perf_counter()
    counts: Counter[str] = await fill(admin, topics, generate(rounds, args.players, MIXED, VAULT))
    await commit_inputs(admin, topics)
    fill_s = time.perf_counter() - started
    print(f"{rounds:,} rounds: {dict(counts)} records in {fill_s:.0f}s", flush=True)
    bare = {service: await bare_read(admin, topics, service) for service in SERVICES}
    print(f"  bare read: {bare}", flush=True)
    launcher = Launcher(
        broker.bootstrap or "",
        log_dir / str(rounds),
        topics.prefix,
        PARTITIONS,
        credentials=principals,
        vault_keys=VAULT_KEYS,
        extra_env={"HOLDEM_SNAPSHOT_INTERVAL_S": str(args.snapshot_interval)},
    )
    result: dict[str, Any] = {
        "rounds": rounds,
        "players": args.players,
        "records": dict(counts),
        "fill_s": round(fill_s, 1),
        "bare_read": bare,
        "cold": {},
        "restart": {},
    }
    try:
        for name in SERVICES:
            result["cold"][name] = await cold_start(launcher, name)
            print(f"  cold {name}: {result['cold'][name]}", flush=True)
        if any("failed" in figures for figures in result["cold"].values()):
            return result
        try:
            result["live_rounds"] = await snapshot_history(
                launcher, principals, topics, args.players
            )
        except (LaunchError, StalledError) as error:
            result["snapshot_failed"] = str(error)[-600:]
            print(f"  no snapshot: {result['snapshot_failed']}", flush=True)
            return result
        for name in SERVICES if not args.twin_only else ():
            result["restart"][name] = await restart(launcher, name)
            print(f"  restart {name}: {result['restart'][name]}", flush=True)
        result["twin"] = {}
        for name in SERVICES:
            result["twin"][name] = await twin_handover(launcher, name)
            print(f"  twin hand-over {name}: {result['twin'][name]}", flush=True)
        async with Operator(principals["operator"], topics, PARTITIONS) as operator:
            await asyncio.gather(
                *(play_round(operator, p) for p in players_per_partition(args.players))
            )
        result["after_restart"] = "a live round per partition settled and paid"
    finally:
        await launcher.stop()
    return result


def table(results: list[dict[str, Any]]) -> str:
    lines = [
        f"{'rounds':>9} {'service':10} {'cold s':>7} {'replay ev/s':>11} {'bare ev/s':>10} "
        f"{'ratio':>6} {'cold RSS':>8} {'restart s':>9} {'start s':>7} {'events':>6} "
        f"{'RSS MB':>6} {'HWM MB':>6}"
    ]
    for result in results:
        for name in SERVICES:
            cold, again = result["cold"].get(name, {}), result["restart"].get(name, {})
            bare = result["bare_read"][name]["events_per_s"]
            if "failed" in cold:
                lines.append(
                    f"{result['rounds']:>9,} {name:10} cold start failed: {cold['failed']}"
                )
                continue
            rate = cold.get("replay_events_per_s") or 0
            lines.append(
                f"{result['rounds']:>9,} {name:10} {cold['start_to_ready_s']:7.1f} "
                f"{rate:11,} {bare:10,} {rate / bare:6.2f} {cold['VmRSS']:8.0f} "
                f"{again.get('kill_to_ready_s', float('nan')):9.1f} "
                f"{again.get('start_to_ready_s', float('nan')):7.1f} "
                f"{again.get('events_replayed', 0):6} {again.get('VmRSS', float('nan')):6.0f} "
                f"{again.get('VmHWM', float('nan')):6.0f}"
            )
    lines.append(
        f"goals: restart-to-ready <= {GOAL_READY_S:.0f} s, RSS <= {GOAL_RSS_MB:.0f} MB, "
        f"replay >= {GOAL_REPLAY} x the bare read"
    )
    lines.append(
        f"{'rounds':>9} {'service':10} {'twin: kill -> every partition s':>31} "
        f"{'session+join s':>14} {'replay s':>8} {'snapshot s':>10} {'events':>6} "
        f"{'rebuilt':>8} {'kept':>6}"
    )
    for result in results:
        for name, twin in result.get("twin", {}).items():
            if "failed" in twin:
                lines.append(f"{result['rounds']:>9,} {name:10} {twin['failed']}")
                continue
            lines.append(
                f"{result['rounds']:>9,} {name:10} {twin['kill_to_all_partitions_s']:31.2f} "
                f"{twin['session_and_join_s']:14.2f} {twin['replay_s']:8.2f} "
                f"{twin.get('snapshot_s', float('nan')):10.2f} {twin['events_replayed']:6} "
                f"{_numbers(twin.get('rebuilt')):>8} {_numbers(twin.get('kept')):>6}"
            )
    lines.append(f"goal: twin serving within the session timeout + 2 s = {GOAL_TWIN_S:.0f} s")
    return "\n".join(lines)


def _numbers(partitions: list[int] | None) -> str:
    return ",".join(map(str, partitions)) if partitions else "-"


async def main(args: argparse.Namespace) -> None:
    log_dir = Path(tempfile.mkdtemp(prefix="holdem-bench-restart-"))
    broker = LocalBroker(log_dir / "kafka")
    await asyncio.to_thread(broker.up)
    results: list[dict[str, Any]] = []
    try:
        for rounds in args.sizes:  # written after each size: a long run keeps what it measured
            results.append(await measure_size(broker, args, rounds, log_dir))
            write({**header("restart", args, log_dir), "results": results}, args.out)
    finally:
        await asyncio.to_thread(broker.down)
    print(table(results))


if __name__ == "__main__":
    asyncio.run(main(parse_args(sys.argv[1:])))
