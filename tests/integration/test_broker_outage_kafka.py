"""Issue 18 item 6, on a broker of their own (kept on its data, killed and started again; not
the session's): rounds in flight across a broker restart are not taken for stuck: no Malfunction
for a round that settles. (Item 5, a twin refused at start, is superseded by ADR 034: a twin is
fenced and reported, never refused; tests/integration/test_recovery_kafka.py.)"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from holdem.client import Operator, Player
from holdem.core.contracts import Called, Malfunction, Settled
from holdem.core.strategy import STRATEGIES
from holdem.core.wire.connection import KafkaConnection
from holdem.core.wire.topics import Topics
from holdem.harness.audit import Record, read_run
from holdem.harness.chaos import Figures, Supervisor
from holdem.harness.load import Plan, fund, play
from holdem.ops.broker import LocalBroker
from holdem.ops.launcher import Launcher, ServiceProcess
from holdem.runtime.topics import ensure_topics

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(420)]

PARTITIONS = 3
EXIT_FATAL = 70
ANSWERS_WITHIN_S = 120.0


@pytest.fixture(scope="module")
async def broker(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LocalBroker]:
    own = LocalBroker(tmp_path_factory.mktemp("outage") / "kafka", keep=True)
    try:
        await asyncio.to_thread(own.up)
        yield own
    finally:
        await asyncio.to_thread(own.down, wipe=True)


async def deployment(
    broker: LocalBroker, tmp_path: Path, tag: str, extra: dict[str, str] | None = None
) -> tuple[Topics, Launcher]:
    kafka = broker.principals()
    topics = Topics.unique(tag)
    await ensure_topics(kafka["admin"], topics, partitions=PARTITIONS, wait=60)
    await asyncio.to_thread(broker.authorize, topics.prefix)
    assert broker.bootstrap is not None
    launcher = Launcher(
        broker.bootstrap,
        tmp_path / tag,
        topics.prefix,
        PARTITIONS,
        credentials=kafka,
        extra_env=extra or {},
    )
    return topics, launcher


async def messages(admin: KafkaConnection, topics: Topics) -> list[Record]:
    return [r for r in await read_run(admin, topics) if r.message is not None]


async def exit_code(service: ServiceProcess, within_s: float) -> int | None:
    deadline = time.monotonic() + within_s
    while service.alive and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    return service.exit_code


async def test_rounds_in_flight_across_a_broker_restart_get_no_malfunction_when_they_settle(
    broker: LocalBroker, tmp_path: Path
) -> None:
    """Item 6: the broker is killed under load and started again after longer than the
    watchdog's bound (3 s here), settlement back later still; the rounds it held up settle, and
    none of them has a Malfunction (the watchdog counted the outage: "stuck: not settled after
    called")."""
    topics, launcher = await deployment(
        broker, tmp_path, "stuck", {"HOLDEM_STUCK_AFTER_S": "3", "HOLDEM_SNAPSHOT_INTERVAL_S": "0"}
    )
    names = ["dealer", "wallet", "settlement"]
    figures = Figures("outage")
    supervisor = Supervisor(launcher, figures)  # restarts what exits 70 after the broker loss
    plan = Plan(rounds=80, players=12, step_s=120.0)
    try:
        await launcher.start(names)
        for label in set(launcher.services) - set(names):
            launcher.services[label].retired = True  # the query service is not needed here
        watch = asyncio.create_task(supervisor.run())
        async with Operator(broker.connection("operator"), topics, PARTITIONS) as client:
            await fund(client, plan)
            load = asyncio.create_task(play(client, plan, STRATEGIES["basic"], tally=figures.tally))
            while figures.tally.rounds < 20:
                assert not load.done(), load
                await asyncio.sleep(0.1)
            # Rounds in flight across the outage, for certain: settlement is held (SIGSTOP) a
            # moment before the kill, so some rounds are called and not settled, and it comes
            # back only a while after the broker, as a slow reconnect would.
            settlement = launcher.services["settlement"].pid
            assert settlement is not None
            os.kill(settlement, signal.SIGSTOP)
            try:
                await asyncio.sleep(1.5)
                await asyncio.to_thread(broker.kill)
                await asyncio.sleep(5.0)
                await asyncio.to_thread(broker.up)
                await asyncio.sleep(8.0)  # the dealer is back and ticking; settlement is not
            finally:
                os.kill(settlement, signal.SIGCONT)
            tally = await asyncio.wait_for(load, 300)
        watch.cancel()
        records = await messages(broker.connection("admin"), topics)
    finally:
        await launcher.stop()
    print(f"\n{tally.rounds} rounds, {dict(tally.outcomes)}, unasked exits {dict(figures.exits)}")
    settled = {
        (r.message.player_id, r.message.round_id)
        for r in records
        if r.message.type == "round.settled"
    }
    # No round is voided (the plan voids none): a watchdog Malfunction read by settlement
    # with the Called it held up voids a round that would have settled (12 of 80 before).
    malfunctions = [r.message for r in records if isinstance(r.message, Malfunction)]
    assert not malfunctions, [f"{m.round_id}: {m.source} {m.reason}" for m in malfunctions]
    assert tally.outcomes["voided"] == 0, tally.outcomes
    assert len(settled) == tally.rounds >= plan.rounds, (len(settled), tally.rounds)


async def resumed(dealer: ServiceProcess, after: int, within_s: float = ANSWERS_WITHIN_S) -> None:
    """Until the dealer's log, past byte ``after`` of its file, says it makes progress again:
    it reached the broker again, or it was restarted (exit 70) and rebuilt its state."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        text = dealer.log_path.read_bytes()[after:].decode("utf-8", errors="replace")
        if "broker answering again" in text or "replayed" in text:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"the dealer did not resume in {within_s:.0f}s:\n{dealer.log_tail()}")


async def test_a_decision_timeout_does_not_run_out_during_a_broker_outage(
    broker: LocalBroker, tmp_path: Path
) -> None:
    """Item 6, the timers: a round is dealt, the broker is away for longer than the table's
    decision time (8 s here), and the player calls 2 s after the dealer makes progress again,
    after its first ticks: the player's Call plays the round. Counted in wall time, the table's
    policy would have folded it at the dealer's first tick after the outage."""
    timing = {"HOLDEM_DECISION_TIMEOUT_S": "8", "HOLDEM_SNAPSHOT_INTERVAL_S": "0"}
    topics, launcher = await deployment(broker, tmp_path, "timer", timing)
    names = ["dealer", "wallet", "settlement"]
    figures = Figures("timer")
    supervisor = Supervisor(launcher, figures)  # restarts what exits 70 after the broker loss
    try:
        await launcher.start(names)
        for label in set(launcher.services) - set(names):
            launcher.services[label].retired = True
        watch = asyncio.create_task(supervisor.run())
        async with Operator(broker.connection("operator"), topics, PARTITIONS) as client:
            alice = Player(client, "alice-timer", step_s=ANSWERS_WITHIN_S)
            await alice.deposit(10_000)
            played = await alice.bet(100)
            await played.dealt()
            dealer = launcher.services["dealer"]
            logged = dealer.log_path.stat().st_size
            await asyncio.to_thread(broker.kill)
            await asyncio.sleep(12.0)  # longer than the decision time
            await asyncio.to_thread(broker.up)
            await resumed(dealer, logged)
            await asyncio.sleep(2.0)  # the dealer ticks meanwhile
            await played.call()
            outcome = await played.outcome()
        watch.cancel()
    finally:
        await launcher.stop()
    assert isinstance(outcome.revealed, Called) and not outcome.revealed.auto, outcome
    assert isinstance(outcome.end, Settled)
