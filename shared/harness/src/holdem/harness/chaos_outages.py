"""`make chaos` phase ``outages`` (issue 26 item 3): long broker outages and what dies with them.

On one broker kept on its data, two instances per service under the load of ``chaos``, seeded:
1. a broker outage of ``outage_s`` (40-90 s) with every instance of one service killed -9 during
   it (the supervisor restarts them, as an orchestrator would, while the broker is still away);
2. a broker outage, then every instance of every service, and the live auditor, killed -9
   right after the broker answers again;
3. twins (an instance's HOLDEM_INSTANCE_ID started a second time): one started before a broker
   kill -9 and restart, one started while the broker is down; both stopped once rounds flow.
After each step it waits for a round to end (bounded) and records the seconds from the broker
answering again to that round: "serving again". The phase ends, like the others, with the audit,
the ownership check and every round ended."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from holdem.harness.load import Tally
from holdem.ops.broker import LaunchError, LocalBroker
from holdem.ops.launcher import SERVICES, Launcher, ServiceProcess

Action = Callable[[], Awaitable[None]]


class Seen(Protocol):
    """What a step records (``chaos.Figures``)."""

    tally: Tally
    broker_kills: list[float]
    serving: list[tuple[str, float]]
    violations: list[str]


class Killable(Protocol):
    """The live auditor (``chaos_auditor.LiveAuditor``): killed -9, its supervisor restarts it."""

    async def kill(self) -> None: ...


class Stage(Protocol):
    """Where the steps act (``chaos.Chaos``: its launcher, broker, figures and seeded rng)."""

    @property
    def launcher(self) -> Launcher: ...
    @property
    def broker(self) -> LocalBroker: ...
    @property
    def figures(self) -> Seen: ...
    @property
    def rng(self) -> random.Random: ...
    @property
    def auditor(self) -> Killable | None: ...


SERVING_WITHIN_S = 240.0  # bound on the wait for the first round after a step (then a violation)
# Bound on each wait of a player for an answer in this phase (then "stalled", a violation): a
# command sent as the broker dies waits out the outage (up to 90 s), the broker's start (2.5 min
# seen at load average 50) and the recovery (up to SERVING_WITHIN_S); 180 s (chaos.STEP_S) was
# shorter than that on a loaded machine, and rounds that ended were counted stalled.
STEP_S = 600.0
BROKER_STARTS = 3  # attempts to start the broker again after an outage, as its supervisor would


@dataclass
class Outages:
    """The steps of the phase, on ``chaos``'s launcher, broker, supervisor and seeded rng."""

    chaos: Stage
    outage_s: tuple[float, float]
    twins: list[ServiceProcess] = field(default_factory=list)

    async def _outage(self, during: Action | None = None) -> float:
        """kill -9 the broker, run ``during`` while it is away, start it again at the end of a
        seeded outage; the monotonic time it answered again."""
        chaos = self.chaos
        seconds = chaos.rng.uniform(*self.outage_s)
        started = time.monotonic()
        await asyncio.to_thread(chaos.broker.kill)
        if during is not None:
            await asyncio.sleep(chaos.rng.uniform(0.0, seconds / 2))
            await during()
        await asyncio.sleep(max(0.0, seconds - (time.monotonic() - started)))
        for attempt in range(BROKER_STARTS):
            try:  # kafka.sh gives a start 90 s: at load average 65 one took longer
                await asyncio.to_thread(chaos.broker.up)
                break
            except LaunchError:
                if attempt == BROKER_STARTS - 1:
                    raise
        back = time.monotonic()
        chaos.figures.broker_kills.append(back - started)
        return back

    async def _serving(self, step: str, back: float) -> None:
        """Wait for a round to end after ``back``; record the seconds, or a violation."""
        figures = self.chaos.figures
        before = figures.tally.rounds
        while figures.tally.rounds <= before:
            if time.monotonic() - back > SERVING_WITHIN_S:
                figures.violations.append(f"{step}: no round ended {SERVING_WITHIN_S:.0f}s after")
                return
            await asyncio.sleep(0.2)
        figures.serving.append((step, time.monotonic() - back))

    async def outage_killing_a_service(self) -> None:
        name = self.chaos.rng.choice(SERVICES)

        async def kill_every_instance() -> None:
            for service in self.chaos.launcher.instances_of(name, live=True):
                service.kill()

        back = await self._outage(kill_every_instance)
        await self._serving(f"outage, every {name} killed in it", back)

    async def outage_then_all_killed(self) -> None:
        back = await self._outage()
        for service in self.chaos.launcher.services.values():
            if service.alive and not service.retired:
                service.kill()  # the supervisor starts each again
        if self.chaos.auditor is not None:
            await self.chaos.auditor.kill()
        await self._serving("outage, every instance killed after it", back)

    def _twin_of(self, tag: str) -> ServiceProcess:
        live = [
            s
            for s in self.chaos.launcher.services.values()
            if s.alive and not s.retired and s not in self.twins
        ]
        original = self.chaos.rng.choice(live)
        twin = ServiceProcess(
            original.name,
            dict(original.env),  # the same HOLDEM_INSTANCE_ID: its transactional id, its group id
            original.log_path.with_name(f"{original.label}-twin-{tag}.log"),
            label=f"{original.label}-twin-{tag}",
        )
        self.twins.append(twin)  # not the launcher's: the supervisor does not restart a twin
        return twin

    async def twins_through_a_restart(self) -> None:
        self._twin_of("before").start()

        async def another_twin() -> None:
            self._twin_of("during").start()

        back = await self._outage(another_twin)
        await self._serving("outage with twins", back)
        stopped = time.monotonic()
        await self.stop_twins()
        await self._serving("twins stopped", stopped)

    async def stop_twins(self) -> None:
        await asyncio.gather(*(twin.stop() for twin in self.twins))


def schedule(outages: Outages, rounds: int) -> list[tuple[int, Action]]:
    """The three steps at evenly spaced marks of ``rounds``, in a seeded order."""
    steps: list[Action] = [
        outages.outage_killing_a_service,
        outages.outage_then_all_killed,
        outages.twins_through_a_restart,
    ]
    outages.chaos.rng.shuffle(steps)
    return [(int((k + 1) / (len(steps) + 1) * rounds), step) for k, step in enumerate(steps)]
