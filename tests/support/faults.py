"""What the network and disk fault tests share (issue 21 item 3): the three services as processes
under a steady load of players, with a supervisor that restarts what exits; the rounds' flow over
time (rounds/s and p99 by phase, the recovery once a fault is removed); and the audit at the end,
which must find every round ended once and the money conserved."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from holdem.client import KafkaConnection, Operator
from holdem.core.strategy import STRATEGIES
from holdem.core.wire.topics import Topics
from holdem.harness.audit import AuditReport, audit_run
from holdem.harness.chaos import Figures, Supervisor
from holdem.harness.load import Plan, Tally, fund, percentile, play
from holdem.ops.broker import LocalBroker
from holdem.ops.launcher import Launcher
from holdem.runtime.app import EXIT_FATAL
from holdem.runtime.topic_setup import ensure_topics

PARTITIONS = 3
NAMES = ("dealer", "wallet", "settlement")
PLAYERS = 8
STEP_S = 240.0  # bound on each wait of a round: a fault, the restarts and the rebuilds after it
DRAIN_S = 240.0  # bound on the rounds in flight once the load stops
WAIT_S = 180.0  # bound on each wait for rounds to end
SAMPLE_S = 0.2
FLOWING_S = 5.0  # "flowing again": a window this long that ends half the rounds it did before
# How long a player's command may wait for the broker's acknowledgement: the players are the
# operator's, whose client rides out a broker restart (the disk-full test's outage is the wait
# for every service to say so, then the broker's start, 20-40 s on a loaded machine), instead
# of the SDK's default 40 s, past which the load itself, not the services, would fail the test.
PLAYER_SEND_S = 150.0


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports free now (bound all at once, then released)."""
    with contextlib.ExitStack() as stack:
        probes = [stack.enter_context(socket.socket()) for _ in range(count)]
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [int(probe.getsockname()[1]) for probe in probes]


@dataclass(frozen=True)
class Mark:
    """The load at one moment: rounds ended and round latencies recorded so far."""

    at: float
    rounds: int
    latencies: int


@dataclass
class Flow:
    """Rounds ended over time, sampled every SAMPLE_S while the load runs."""

    tally: Tally
    points: list[Mark] = field(default_factory=list)
    load: asyncio.Task[Tally] | None = None  # the players: their failure ends every wait

    def mark(self) -> Mark:
        return Mark(time.monotonic(), self.tally.rounds, len(self.tally.latencies))

    async def watch(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self.points.append(self.mark())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), SAMPLE_S)
        self.points.append(self.mark())

    async def more(self, rounds: int, what: str, within_s: float = WAIT_S) -> Mark:
        """Wait until ``rounds`` more rounds have ended; fail naming ``what`` after ``within_s``
        (a bound, not a speed target: a stuck load fails instead of hanging)."""
        start = self.tally.rounds
        deadline = time.monotonic() + within_s
        while self.tally.rounds < start + rounds:
            if self.load is not None and self.load.done():
                self.load.result()  # the players' own error (the SDK's), if that is what ended it
                raise AssertionError(f"the load ended while waiting for {rounds} rounds {what}")
            if time.monotonic() > deadline:
                raise AssertionError(f"not within {within_s:.0f}s: {rounds} rounds {what}")
            await asyncio.sleep(SAMPLE_S)
        return self.mark()

    def phase(self, start: Mark, end: Mark) -> dict[str, float]:
        """Rounds ended between two marks, per second, and the p50/p99 of their whole
        durations (bet sent to result read) as the players saw them."""
        seconds = max(end.at - start.at, 1e-9)
        took = self.tally.latencies[start.latencies : end.latencies]
        return {
            "seconds": round(seconds, 1),
            "rounds": end.rounds - start.rounds,
            "rounds_per_s": round((end.rounds - start.rounds) / seconds, 2),
            "p50_s": round(percentile(took, 0.5), 2),
            "p99_s": round(percentile(took, 0.99), 2),
        }

    def recovery(self, removed: Mark, rate: float) -> dict[str, float | None]:
        """From the fault's removal: seconds until the next round ended, and until rounds were
        flowing again (the end of the first FLOWING_S window after the removal that ended at
        least half the rounds ``rate``, the rounds/s before the fault, would have). None: not
        seen while the load ran."""
        after = [p for p in self.points if p.at >= removed.at]
        first = next((p.at - removed.at for p in after if p.rounds > removed.rounds), None)
        need = max(1.0, 0.5 * rate * FLOWING_S)
        flowing = None
        for p in after:
            began = [q for q in after if q.at <= p.at - FLOWING_S] or [after[0]]
            if p.rounds - began[-1].rounds >= need:
                flowing = p.at - removed.at
                break
        return {
            "first_round_s": None if first is None else round(first, 1),
            "flowing_s": None if flowing is None else round(flowing, 1),
        }


@dataclass
class Run:
    """One deployment: its topics, its services, the supervisor's count, the load's flow."""

    broker: LocalBroker
    topics: Topics
    launcher: Launcher
    figures: Figures
    flow: Flow
    alive: dict[str, bool] = field(default_factory=dict)  # each service, once the load drained
    # "start" (measuring begins), "fault" (put on), "removed", "end": the phases between them
    marks: dict[str, Mark] = field(default_factory=dict)

    def mark(self, name: str) -> Mark:
        found = self.marks[name] = self.flow.mark()
        return found

    @property
    def tally(self) -> Tally:
        return self.figures.tally

    def logs(self) -> str:
        return f"(service logs in {self.launcher.log_dir}, broker log in {self.broker.run_dir})"

    def exit_codes(self) -> set[int]:
        """The statuses of the exits the supervisor saw (and restarted)."""
        return {int(key.rsplit(":", 1)[1]) for key in self.figures.exits}


async def deploy(
    broker: LocalBroker,
    services: Mapping[str, KafkaConnection],
    log_dir: Path,
    tag: str,
    *,
    metrics_ports: Mapping[str, int] | None = None,
) -> tuple[Topics, Launcher]:
    """Fresh topics authorized for the services, and the three services started and ready,
    each connecting as ``services`` says (directly, or through a proxy)."""
    topics = Topics.unique(tag)
    await ensure_topics(broker.connection("admin"), topics, partitions=PARTITIONS, wait=60)
    await asyncio.to_thread(broker.authorize, topics.prefix)
    launcher = Launcher(
        services["dealer"].bootstrap,
        log_dir,
        topics.prefix,
        PARTITIONS,
        metrics_ports=metrics_ports or {},
        credentials=services,
    )
    await launcher.start(NAMES)
    for label in set(launcher.services) - set(NAMES):
        launcher.services[label].retired = True  # the query service plays no part in a round
    return topics, launcher


@contextlib.asynccontextmanager
async def steady_load(
    broker: LocalBroker, topics: Topics, launcher: Launcher, tag: str
) -> AsyncIterator[Run]:
    """PLAYERS players playing rounds one after another (the operator's SDK, directly on the
    broker, never through the proxy) and a supervisor restarting any service that exits, until
    the block ends; then the rounds in flight finish and the supervisor stops."""
    figures = Figures(tag)
    flow = Flow(figures.tally)
    supervisor = Supervisor(launcher, figures)
    plan = Plan(rounds=100_000, players=PLAYERS, step_s=STEP_S)
    operator = broker.connection("operator")
    async with Operator(operator, topics, PARTITIONS, send_timeout_s=PLAYER_SEND_S) as client:
        await fund(client, plan)
        stop = asyncio.Event()
        flow.load = asyncio.create_task(
            play(client, plan, STRATEGIES["basic"], stop, figures.tally)
        )
        tasks = [flow.load, asyncio.create_task(flow.watch(stop))]
        watch = asyncio.create_task(supervisor.run())
        try:
            run = Run(broker, topics, launcher, figures, flow)
            yield run
            stop.set()
            await asyncio.wait_for(asyncio.gather(*tasks), DRAIN_S)
            run.alive = {label: launcher.services[label].alive for label in NAMES}
        finally:
            stop.set()
            for task in [*tasks, watch]:
                task.cancel()
            await asyncio.gather(*tasks, watch, return_exceptions=True)


async def audited(run: Run) -> AuditReport:
    """The audit of every committed record of the run (as admin, directly on the broker)."""
    return await audit_run(run.broker.connection("admin"), run.topics)


def assert_clean(run: Run, report: AuditReport) -> None:
    """Every service alive at the end (itself or restarted), every exit one the runtime chose
    for its supervisor (status 70), every round ended for its player and in the log once, the
    audit clean."""
    tally, logs = run.tally, run.logs()
    assert run.alive and all(run.alive.values()), (
        f"a service is down at the end: {run.alive} {logs}"
    )
    assert run.exit_codes() <= {EXIT_FATAL}, f"exits not for the supervisor: {run.figures.exits}"
    assert not tally.stalled, f"rounds that never ended for the player: {tally.stalled} {logs}"
    assert report.ok, "invariants broken:\n  " + "\n  ".join(report.violations[:30]) + logs
    assert report.rounds == report.ended == tally.rounds > 0, (report, tally.outcomes, logs)


def summary(run: Run, report: AuditReport) -> dict[str, Any]:
    """What every fault test prints beside its own figures: the load before the fault, during
    it and after its removal, the recovery, the supervisor's restarts, the audit."""
    flow, marks = run.flow, run.marks
    phases = {
        "before": flow.phase(marks["start"], marks["fault"]),
        "during": flow.phase(marks["fault"], marks["removed"]),
        "after": flow.phase(marks["removed"], marks["end"]),
    }
    return {
        "phases": phases,
        "recovery": flow.recovery(marks["removed"], phases["before"]["rounds_per_s"]),
        "rounds": run.tally.rounds,
        "outcomes": dict(run.tally.outcomes),
        "late_decisions": run.tally.late_decisions,
        "exits_restarted": dict(run.figures.exits),
        "restart_to_ready_s": [round(s, 1) for s in run.figures.restarts],
        "audit": {
            "records": report.records,
            "rounds": report.rounds,
            "violations": len(report.violations),
        },
    }
