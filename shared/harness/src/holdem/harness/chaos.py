"""`make chaos`: the services under fire, then the audit and the ownership check (issue 8).

Phase ``single``: one broker kept on its data; two instances per service; players with mixed
strategies, some rounds voided by the operator; SIGKILLs of random instances, broker kill -9
and restart on its data, an instance of some service stopped for good (SIGTERM) and one added.
Phase ``cluster``: the same on a three-node cluster, with one node SIGKILLed and brought back.
Phase ``outages`` (``holdem.harness.chaos_outages``): long broker outages with every instance of a
service killed in them, everything killed right after one, twins through a broker restart; the
seconds from the broker answering again to the next round ended are printed ("serving again").
Actions fire as the rounds ended reach evenly spaced marks, so each lands under load. A
process that exits on its own (status 70 after a broker loss, say) is started again as a
supervisor would, and counted. The live auditor (``holdem-auditor``, ``chaos_auditor``) runs
beside the services for the whole phase, is killed -9 once (or with everything, phase
outages) and resumes from its checkpoint, and at the end must be at the log's end with no
finding. Afterwards every record of the run is audited (holdem.harness.audit) and checked for
ownership (holdem.harness.ownership); the run prints its figures and exits 1 on any violation
or stalled round."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from holdem.client import Operator
from holdem.core.rules import Decision
from holdem.core.strategy import STRATEGIES, Decide
from holdem.core.wire.headers import operator_of_prefix
from holdem.core.wire.topics import Topics
from holdem.harness.audit import check, read_run
from holdem.harness.chaos_auditor import LiveAuditor
from holdem.harness.chaos_outages import STEP_S as OUTAGE_STEP_S
from holdem.harness.chaos_outages import Outages
from holdem.harness.chaos_outages import schedule as outage_steps
from holdem.harness.load import Plan as LoadPlan
from holdem.harness.load import Tally, fund, play
from holdem.harness.ownership import check_ownership
from holdem.ops.broker import LaunchError, LocalBroker
from holdem.ops.create_topics import ensure_findings_topic
from holdem.ops.launcher import SERVICES, Launcher
from holdem.runtime.topic_setup import ensure_topics

STEP_S = 180.0  # bound on each wait of a round: a broker restart and a takeover may both fall in
MIXED = ("basic", "basic-bonus", "always-call", "coin")  # "coin": call or fold at random
SUPERVISE_S = 0.5
DOWN_S = (0.0, 2.0)
ROOM = 20  # a plan's rounds, in shares of the target
VOID_EVERY = 40
PROGRESS_S = 30.0  # a killed instance or broker stays dead this long (uniform)


@dataclass(frozen=True)
class Config:
    rounds: int = 10_000
    cluster_rounds: int = 600
    players: int = 48
    kills: int = 30  # SIGKILLs of service instances in the single-broker phase
    cluster_kills: int = 4
    broker_kills: int = 2
    instances: int = 2
    partitions: int = 6
    seed: int = 0
    phases: tuple[str, ...] = ("single", "cluster")
    outage_s: tuple[float, float] = (40.0, 90.0)  # phase outages: each outage, uniform
    outage_rounds: int = 60  # phase outages: rounds at least (the load runs until every step)
    log_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="holdem-chaos-")))


@dataclass
class Figures:
    """What one phase did and saw."""

    phase: str
    kills: list[tuple[str, float]] = field(default_factory=list)  # label, s until ready again
    broker_kills: list[float] = field(default_factory=list)  # s from kill -9 to serving again
    serving: list[tuple[str, float]] = field(default_factory=list)  # step, s from broker back
    scaled: list[str] = field(default_factory=list)
    exits: Counter[str] = field(default_factory=Counter)  # "label:code" of unasked exits
    restarts: list[float] = field(default_factory=list)  # supervisor restarts: s to ready
    tally: Tally = field(default_factory=Tally)
    records: int = 0
    decided: int = 0
    violations: list[str] = field(default_factory=list)
    seconds: float = 0.0
    auditor: str = ""  # the live auditor's line

    def lines(self) -> list[str]:
        t = self.tally
        ready = [s for _, s in self.kills if s == s] + self.restarts  # nan: not ready (retried)
        return [
            f"[{self.phase}] rounds {t.rounds} in {self.seconds:.0f}s "
            f"({t.rounds / max(self.seconds, 1e-9):.1f} rounds/s), {dict(t.outcomes)}, "
            f"operator voids {t.operator_voids}, decided late {t.late_decisions}, "
            f"stalled {len(t.stalled)}",
            f"[{self.phase}] SIGKILLs {len(self.kills)} "
            f"({dict(Counter(label for label, _ in self.kills))}); ready again p50 "
            f"{_median(ready):.1f}s max {max(ready, default=0.0):.1f}s",
            f"[{self.phase}] broker kill -9 + restart: {len(self.broker_kills)} "
            f"(serving again after {', '.join(f'{s:.1f}s' for s in self.broker_kills) or '-'})",
            *(
                [
                    f"[{self.phase}] serving again (broker answering to a round ended): "
                    + "; ".join(f"{step} {s:.1f}s" for step, s in self.serving)
                ]
                if self.serving
                else []
            ),
            f"[{self.phase}] unasked exits restarted by the supervisor: {len(self.restarts)} "
            f"{dict(self.exits)}",
            f"[{self.phase}] scaled: {'; '.join(self.scaled) or '-'}",
            f"[{self.phase}] audit: {self.records} records; ownership: {self.decided} decisions; "
            f"violations {len(self.violations)}",
            *([f"[{self.phase}] {self.auditor}"] if self.auditor else []),
            *(f"[{self.phase}]   {v}" for v in self.violations[:30]),
        ]


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def coin(seed: int) -> Decide:
    rng = random.Random(seed)

    def decide(hole: Sequence[int], flop: Sequence[int]) -> Decision:
        return "call" if rng.random() < 0.5 else "fold"

    return decide


def strategy(name: str, seed: int) -> Decide:
    return coin(seed) if name == "coin" else STRATEGIES[name]


@dataclass
class Supervisor:
    """Restarts instances that ended without being asked (not retired, not in a chaos action)."""

    launcher: Launcher
    figures: Figures
    busy: set[str] = field(default_factory=set)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def run(self) -> None:
        while True:
            await asyncio.sleep(SUPERVISE_S)
            for label, service in list(self.launcher.services.items()):
                if service.retired or service.alive or label in self.busy:
                    continue
                self.figures.exits[f"{label}:{service.exit_code}"] += 1
                self.busy.add(label)
                task = asyncio.create_task(self._restart(label))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)

    async def _restart(self, label: str) -> None:
        service = self.launcher.services[label]
        try:
            started = time.monotonic()
            service.start()
            await service.wait_ready()
            self.figures.restarts.append(time.monotonic() - started)
        except LaunchError:
            pass  # it died again (the broker is still down, say): the next round restarts it
        finally:
            self.busy.discard(label)


Action = Callable[[], Awaitable[None]]


@dataclass
class Chaos:
    """The actions of one phase, each fired when the rounds ended reach its mark."""

    launcher: Launcher
    broker: LocalBroker
    figures: Figures
    supervisor: Supervisor
    rng: random.Random
    auditor: LiveAuditor | None = None

    async def kill_auditor(self) -> None:
        if self.auditor is not None:
            await self.auditor.kill()

    async def kill(self) -> None:
        live = [s for s in self.launcher.services.values() if s.alive and not s.retired]
        live = [s for s in live if s.label not in self.supervisor.busy]
        if not live:
            return
        service = self.rng.choice(live)
        self.supervisor.busy.add(service.label)
        try:
            seconds = await self.launcher.restart(service.label, self.rng.uniform(*DOWN_S))
            self.figures.kills.append((service.label, seconds))
        except LaunchError:
            self.figures.kills.append((service.label, float("nan")))  # the supervisor retries
        finally:
            self.supervisor.busy.discard(service.label)

    async def kill_broker(self) -> None:
        started = time.monotonic()
        await asyncio.to_thread(self.broker.kill)
        await asyncio.sleep(self.rng.uniform(*DOWN_S))
        await asyncio.to_thread(self.broker.up)
        self.figures.broker_kills.append(time.monotonic() - started)

    async def kill_node(self) -> None:
        node = self.rng.randrange(1, self.broker.nodes + 1)
        started = time.monotonic()
        await asyncio.to_thread(self.broker.kill_node, node)
        await asyncio.sleep(self.rng.uniform(*DOWN_S) + 5.0)  # the load runs on the two left
        await asyncio.to_thread(self.broker.start_node, node)
        self.figures.broker_kills.append(time.monotonic() - started)

    async def scale_in(self) -> None:
        name = self.rng.choice(SERVICES)
        live = self.launcher.instances_of(name, live=True)
        if len(live) < 2:  # keep one at least: scale in, not out of service
            self.figures.scaled.append(f"{name}: one live instance, none stopped")
            return
        service = self.rng.choice(live)
        self.supervisor.busy.add(service.label)
        started = time.monotonic()
        code = await self.launcher.retire(service.label)
        self.figures.scaled.append(
            f"{service.label} stopped (exit {code}, {time.monotonic() - started:.1f}s)"
        )

    async def scale_out(self) -> None:
        name = self.rng.choice(SERVICES)
        label, seconds = await self.launcher.add(name)
        self.figures.scaled.append(f"{label} added (ready in {seconds:.1f}s)")


def schedule(
    chaos: Chaos, rounds: int, kills: int, broker_kills: int, node: bool
) -> list[tuple[int, Action]]:
    """(mark, action) pairs: kills spread over the run, broker losses and scaling between."""
    plan: list[tuple[float, Action]] = [((k + 0.5) / kills * 0.9, chaos.kill) for k in range(kills)]
    plan += [((k + 1) / (broker_kills + 1), chaos.kill_broker) for k in range(broker_kills)]
    if node:
        plan.append((0.5, chaos.kill_node))
    plan += [(0.25, chaos.scale_in), (0.3, chaos.scale_out), (0.6, chaos.scale_in)]
    plan.append((0.65, chaos.scale_out))
    if chaos.auditor is not None:
        plan.append((0.45, chaos.kill_auditor))
    return sorted(((int(mark * rounds), action) for mark, action in plan), key=lambda x: x[0])


async def fire(
    actions: list[tuple[int, Action]], tally: Tally, load: asyncio.Future[object]
) -> int:
    """Each action once the rounds ended reach its mark; how many fired before the load ended."""
    fired = 0
    for mark, action in actions:
        while tally.rounds < mark and not load.done():  # noqa: ASYNC110 (a count, not an event)
            await asyncio.sleep(0.2)
        if load.done():
            break
        await action()
        fired += 1
    return fired


async def report_progress(figures: Figures, target: int) -> None:
    """A plain line every PROGRESS_S: how far the phase is, what it has done."""
    began = time.monotonic()
    while True:
        await asyncio.sleep(PROGRESS_S)
        t = figures.tally
        print(
            f"progress [{figures.phase}] {time.monotonic() - began:.0f}s: {t.rounds} of {target}+ "
            f"rounds, {t.open} open, {len(figures.kills)} SIGKILLs, "
            f"{len(figures.broker_kills)} broker kills, {len(figures.restarts)} restarts",
            flush=True,
        )


Plan = Callable[[Chaos], list[tuple[int, Action]]]


async def run_phase(
    config: Config,
    broker: LocalBroker,
    name: str,
    rounds: int,
    kills: int,
    broker_kills: int,
    actions_of: Plan | None = None,
    cleanup: Callable[[], Awaitable[None]] | None = None,
    step_s: float = STEP_S,
) -> Figures:
    """One phase: the load, the actions (``actions_of``; default: ``schedule``'s kills, broker
    losses and scaling) each at its mark, then ``cleanup``, the audit and the ownership check."""
    figures = Figures(name)
    started = time.monotonic()
    bootstrap = await asyncio.to_thread(broker.up)
    kafka = broker.principals()
    topics = Topics.unique(f"chaos-{name}")
    prefix = topics.commands.removesuffix(".holdem.commands")
    await ensure_topics(kafka["admin"], topics, partitions=config.partitions, wait=60)
    await asyncio.to_thread(broker.authorize, prefix)
    await ensure_findings_topic(kafka["admin"], topics)
    auditor = LiveAuditor.of(kafka["auditor"], topics, config.log_dir / name)
    launcher = Launcher(
        bootstrap,
        config.log_dir / name,
        prefix,
        config.partitions,
        credentials=kafka,
        instances=config.instances,
    )
    rng = random.Random(f"{config.seed}/{name}")
    supervisor = Supervisor(launcher, figures)
    chaos = Chaos(launcher, broker, figures, supervisor, rng, auditor)
    actions = (
        actions_of(chaos)
        if actions_of is not None
        else schedule(chaos, rounds, kills, broker_kills, node=broker.nodes > 1)
    )
    # The load runs until every action has fired and ``rounds`` rounds have ended: each plan
    # has room for far more than its share (the actions take their time), one round in
    # VOID_EVERY voided by the operator.
    room = ROOM * max(-(-rounds // len(MIXED)), 50)
    players = max(config.players // len(MIXED), 1)
    plans = [(LoadPlan(room, players, voids=room // VOID_EVERY, step_s=step_s), s) for s in MIXED]
    auditing = asyncio.create_task(auditor.supervise())
    try:
        async with launcher, Operator(kafka["operator"], topics, config.partitions) as client:
            for plan, _ in plans:
                await fund(client, plan)
            watch = asyncio.create_task(supervisor.run())
            stop = asyncio.Event()
            loads = [
                play(client, plan, strategy(s, config.seed), stop, figures.tally)
                for plan, s in plans
            ]
            load: asyncio.Future[object] = asyncio.ensure_future(asyncio.gather(*loads))
            progress = asyncio.create_task(report_progress(figures, rounds))
            fired = await fire(actions, figures.tally, load)
            while figures.tally.rounds < rounds and not load.done():  # noqa: ASYNC110
                await asyncio.sleep(0.2)
            stop.set()
            await load
            if cleanup is not None:
                await cleanup()
            figures.tally.started = started
            watch.cancel()
            progress.cancel()
            # The live auditor to the log's end while the run's records are read.
            finishing = asyncio.create_task(auditor.finish(kafka["admin"], topics))
            records = await read_run(kafka["admin"], topics)
            figures.auditor, found = await finishing
    finally:
        auditor.stopping = True
        auditing.cancel()
        await auditor.process.stop()
    figures.seconds = time.monotonic() - started
    report = check(records, operator=operator_of_prefix(topics.prefix))
    ownership = check_ownership(records)
    figures.records, figures.decided = report.records, ownership.decided
    figures.violations = [*figures.violations, *report.violations, *ownership.violations]
    figures.violations += found
    figures.violations += [f"stalled: {s}" for s in figures.tally.stalled]
    if fired < len(actions):
        figures.violations.append(f"only {fired} of {len(actions)} chaos actions fired")
    if report.rounds != report.ended or report.ended != figures.tally.rounds:
        figures.violations.append(
            f"rounds placed {report.rounds}, ended {report.ended}, seen {figures.tally.rounds}"
        )
    return figures


async def run(config: Config) -> list[Figures]:
    done: list[Figures] = []
    if "single" in config.phases:
        broker = LocalBroker(config.log_dir / "kafka", keep=True)
        try:
            done.append(
                await run_phase(
                    config, broker, "single", config.rounds, config.kills, config.broker_kills
                )
            )
        finally:
            await asyncio.to_thread(broker.down, wipe=True)
    if "cluster" in config.phases:
        cluster = LocalBroker(config.log_dir / "kafka3", nodes=3)
        try:
            done.append(
                await run_phase(
                    config, cluster, "cluster", config.cluster_rounds, config.cluster_kills, 0
                )
            )
        finally:
            await asyncio.to_thread(cluster.down, wipe=True)
    if "outages" in config.phases:
        done.append(await run_outages(config))
    return done


async def run_outages(config: Config) -> Figures:
    broker = LocalBroker(config.log_dir / "kafka-outages", keep=True)
    steps: list[Outages] = []

    def plan(chaos: Chaos) -> list[tuple[int, Action]]:
        steps.append(Outages(chaos, config.outage_s))
        return outage_steps(steps[0], config.outage_rounds)

    async def cleanup() -> None:
        for outages in steps:
            await outages.stop_twins()

    try:
        return await run_phase(
            config, broker, "outages", config.outage_rounds, 0, 0, plan, cleanup, OUTAGE_STEP_S
        )
    finally:
        await asyncio.to_thread(broker.down, wipe=True)


def parse_args(argv: list[str] | None) -> Config:
    parser = argparse.ArgumentParser(prog="python -m holdem.harness.chaos", description=__doc__)
    add = parser.add_argument
    defaults = Config(log_dir=Path())
    add("--rounds", type=int, default=defaults.rounds, help="rounds on the single broker")
    add("--cluster-rounds", type=int, default=defaults.cluster_rounds)
    add("--players", type=int, default=defaults.players)
    add("--kills", type=int, default=defaults.kills, help="SIGKILLs on the single broker")
    add("--cluster-kills", type=int, default=defaults.cluster_kills)
    add("--broker-kills", type=int, default=defaults.broker_kills)
    add("--instances", type=int, default=defaults.instances, help="per service at the start")
    add("--partitions", type=int, default=defaults.partitions)
    add("--seed", type=int, default=None, help="default: random (printed)")
    add("--nodes", choices=("1", "3", "both"), default="both", help="which phases to run")
    add("--log-dir", type=Path, default=None)
    add(
        "--phases",
        default=os.environ.get("CHAOS_PHASES") or None,
        help="comma-separated phases of single, cluster, outages (default: CHAOS_PHASES, "
        "else --nodes)",
    )
    add("--outage-s", default="40,90", help="phase outages: each outage's bounds, seconds")
    add("--outage-rounds", type=int, default=defaults.outage_rounds)
    args = parser.parse_args(argv)
    if min(args.rounds, args.cluster_rounds, args.players, args.instances) < 1:
        parser.error("rounds, players and instances must be positive")
    phases = {"1": ("single",), "3": ("cluster",), "both": ("single", "cluster")}[args.nodes]
    if args.phases:
        phases = tuple(p.strip() for p in args.phases.split(",") if p.strip())
        unknown = set(phases) - {"single", "cluster", "outages"}
        if unknown:
            parser.error(f"unknown phases {sorted(unknown)}")
    low, high = (float(s) for s in args.outage_s.split(","))
    counts = ("rounds", "cluster_rounds", "players", "kills", "cluster_kills", "broker_kills")
    return Config(
        **{name: getattr(args, name) for name in (*counts, "instances", "partitions")},
        seed=args.seed if args.seed is not None else random.randrange(2**32),
        phases=phases,
        outage_s=(low, high),
        outage_rounds=args.outage_rounds,
        **({"log_dir": args.log_dir} if args.log_dir else {}),
    )


def main(argv: list[str] | None = None) -> int:
    config = parse_args(argv)
    # The operator client's reconnect chatter during a broker's death: the figures say it all.
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    print(f"chaos: seed {config.seed}, logs in {config.log_dir}", flush=True)
    started = time.monotonic()
    figures = asyncio.run(run(config))
    for phase in figures:
        print("\n".join(phase.lines()), flush=True)
    bad = sum(len(f.violations) for f in figures)
    print(f"chaos: {'FAILED' if bad else 'passed'} in {time.monotonic() - started:.0f}s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
