"""Issue 26, items 1 and 2, on a broker of their own (kept on its data, killed -9 and started
again; not the session's): no outage, duplicate or crash pattern leaves a service down.

1. A broker outage longer than the session (6 s) and transaction (15 s) timeouts, every instance
   of wallet, settlement and query killed -9 during it (their supervisor restarting them all
   along): once the broker answers, every service is serving again and a round settles, with no
   manual step. Before ADR 034 a restarted broker's listing of the dead members made the start-up
   check refuse every restart.
2. A twin (same HOLDEM_INSTANCE_ID) started while the original runs, then a broker restart: the
   twin is reported (the watch's critical line, what sets holdem_duplicate_instance), whoever is
   fenced exits 70 with the line naming the id and its causes, a supervisor restarting them
   bricks nothing, and each deposit is answered exactly once.

Each prints its figures; timing is asserted only against generous bounds."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support.kafka_io import send_messages
from support.messages import command
from support.own_broker import deployment, kept_broker

from holdem.client import Operator, Player
from holdem.core.contracts import Deposit, FundsDeposited, Settled
from holdem.core.wire.topics import Topics
from holdem.harness.audit import audit_run, read_run
from holdem.ops.broker import LocalBroker
from holdem.ops.launcher import Launcher, ServiceProcess
from holdem.runtime.kafka import KafkaGroupAdmin

pytestmark = [pytest.mark.kafka, pytest.mark.timeout(600)]

PARTITIONS = 3
EXIT_FATAL = 70
OUTAGE_S = 20.0  # longer than the session (6 s) and transaction (15 s) timeouts
# The goals are 60 s (serving) and 90 s (a round settled) after the broker answers; at a
# load average of 20+ a start alone can take 30 s, so the test bounds are generous and the
# figures are printed.
SERVING_WITHIN_S = 180.0
MAX_RESTARTS = 20
WAVES = 5


@pytest.fixture(scope="module")
async def broker(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LocalBroker]:
    async with kept_broker(tmp_path_factory.mktemp("recovery")) as own:
        yield own


class Supervise:
    """Restarts what ended without being asked, as an orchestrator would, at most
    ``MAX_RESTARTS`` times; records each exit code and what the process logged before it."""

    def __init__(self, launcher: Launcher) -> None:
        self.launcher = launcher
        self.exits: list[tuple[str, int | None, str]] = []
        self.ready_at: dict[str, float] = {}  # label -> when its latest start was ready

    async def run(self) -> None:
        while True:
            for label, service in list(self.launcher.services.items()):
                if service.retired:
                    continue
                if service.alive:
                    if label not in self.ready_at and service.replays():
                        self.ready_at[label] = time.monotonic()
                    continue
                if len(self.exits) >= MAX_RESTARTS:
                    continue
                self.exits.append((label, service.exit_code, service.log_since_start()))
                self.ready_at.pop(label, None)
                service.start()
            await asyncio.sleep(0.5)

    def codes(self) -> list[int | None]:
        return [code for _, code, _ in self.exits]


def kill(service: ServiceProcess) -> None:
    service.kill()


async def listed(broker: LocalBroker, group: str) -> list[str] | None:
    admin = KafkaGroupAdmin(broker.connection("admin"))
    try:
        found = await admin.members(group)
    finally:
        await admin.close()
    return None if found is None else sorted(f"{m.client_id} ({m.member_id[-12:]})" for m in found)


# Not in make test yet (-m slow): 2 of 4 runs here (load 13-33) passed (serving 6.7 s, a round
# 8.7 s after the broker answered); 2 stalled after every service was ready again: once no
# Settled for a called round, once no answer from the wallet to a PlaceBet in 180 s, no exit,
# no error line. A stall of its own, not yet explained (ADR 034, "Open"); not a refused start.
@pytest.mark.slow
async def test_every_service_is_back_by_itself_after_a_long_outage_that_killed_every_instance(
    broker: LocalBroker, tmp_path: Path
) -> None:
    topics, launcher = await deployment(broker, tmp_path, "long-outage", PARTITIONS)
    killed = ["wallet", "settlement", "query"]
    supervise = Supervise(launcher)
    watch: asyncio.Task[None] | None = None
    try:
        await launcher.start()
        async with Operator(broker.connection("operator"), topics, PARTITIONS) as client:
            alice = Player(client, "alice-recovery", step_s=SERVING_WITHIN_S)
            await alice.deposit(10_000)
            before = await alice.bet(100)
            await before.dealt()
            await before.call()
            assert isinstance((await before.outcome()).end, Settled)
        watch = asyncio.create_task(supervise.run())
        await asyncio.to_thread(broker.kill)
        down = time.monotonic()
        for label in killed:  # every instance of these, during the outage
            kill(launcher.services[label])
        await asyncio.sleep(max(0.0, OUTAGE_S - (time.monotonic() - down)))
        supervise.ready_at.clear()  # ready since the outage only
        await asyncio.to_thread(broker.up)
        answered = time.monotonic()
        outage = answered - down
        wallet_group = f"{topics.prefix}.holdem-wallet"
        print(
            f"\nbroker away {outage:.1f}s; wallet group lists {await listed(broker, wallet_group)}"
        )
        # Every service serving: the killed ones restarted and rebuilt since the outage, the
        # dealer alive (the round below proves it deals again).
        dealer = launcher.services["dealer"]
        deadline = answered + SERVING_WITHIN_S
        while not all(label in supervise.ready_at for label in killed) or not dealer.alive:
            assert time.monotonic() < deadline, (
                f"not serving {SERVING_WITHIN_S:.0f}s after the broker answered: ready "
                f"{sorted(supervise.ready_at)}, exits {supervise.codes()}\n"
                + "\n".join(launcher.services[label].log_tail(8) for label in killed)
            )
            await asyncio.sleep(0.5)
        serving = max(supervise.ready_at.get(label, answered) for label in killed) - answered
        try:
            async with Operator(broker.connection("operator"), topics, PARTITIONS) as client:
                alice = Player(client, "alice-recovery", step_s=SERVING_WITHIN_S)
                after = await alice.bet(100)
                await after.dealt()
                await after.call()
                outcome = await after.outcome()
        except Exception as error:  # what each service did meanwhile, to say why
            tails = "\n".join(
                f"--- {label}\n{service.log_tail(12)}"
                for label, service in launcher.services.items()
            )
            raise AssertionError(
                f"no round after the outage: {error!r}; exits {supervise.codes()}\n{tails}"
            ) from error
        settled = time.monotonic() - answered
        print(
            f"serving {serving:.1f}s and a round settled {settled:.1f}s after the broker "
            f"answered (goals 60 s, 90 s); wallet group lists "
            f"{await listed(broker, wallet_group)}; "
            f"exits {supervise.codes()}"
        )
        assert isinstance(outcome.end, Settled), outcome
        assert len(supervise.exits) < MAX_RESTARTS, supervise.codes()
        # Whatever exited did so loudly: 70, or the -9 the test sent.
        assert set(supervise.codes()) <= {EXIT_FATAL, -9}, supervise.exits
        report = await audit_run(broker.connection("admin"), topics)
        assert report.ok, report.violations[:10]
    finally:
        if watch is not None:
            watch.cancel()
        await launcher.stop()


async def test_a_twin_through_a_broker_restart_leaves_one_owner_and_every_deposit_once(
    broker: LocalBroker, tmp_path: Path
) -> None:
    topics, launcher = await deployment(
        broker, tmp_path, "twin", PARTITIONS, {"HOLDEM_TWIN_CHECK_S": "2"}
    )
    kafka = broker.principals()
    supervise = Supervise(launcher)
    watch: asyncio.Task[None] | None = None
    deposits = [command(Deposit, "twin-p0", currency="EUR", amount=1_000)]
    try:
        await launcher.start(["wallet"])
        for label in set(launcher.services) - {"wallet"}:
            launcher.services[label].retired = True
        original = launcher.services["wallet"]
        await send_messages(kafka["operator"], topics.commands, deposits[:1])
        await answered(broker, topics, deposits[:1])
        twin = ServiceProcess(
            "wallet", dict(original.env), original.log_path.with_name("twin.log"), label="twin"
        )
        launcher.services["twin"] = twin
        twin.start()
        watch = asyncio.create_task(supervise.run())
        pair = [original, twin]
        # The watch reports the twin (the line that comes with holdem_duplicate_instance 1).
        deadline = time.monotonic() + SERVING_WITHIN_S
        while not any("twin: another live member" in s.log_path.read_text() for s in pair):
            assert time.monotonic() < deadline, [s.log_tail(8) for s in pair]
            await asyncio.sleep(0.5)
        await asyncio.to_thread(broker.kill)
        await asyncio.sleep(5.0)
        await asyncio.to_thread(broker.up)
        back = time.monotonic()
        # Waves of deposits of players on every partition until the fenced one (whichever
        # started its producer first) has met its fence: both hold partitions once the group
        # is stable again.
        for wave in range(WAVES):
            batch = [
                command(Deposit, f"twin-w{wave}-p{n}", currency="EUR", amount=1_000)
                for n in range(6)
            ]
            deposits += batch
            await send_messages(kafka["operator"], topics.commands, batch)
            await answered(broker, topics, deposits)
            if any("producer fenced" in logged for _, _, logged in supervise.exits):
                break
        print(
            f"\nevery deposit answered {time.monotonic() - back:.1f}s after the broker; "
            f"exits {supervise.codes()}; alive {[s.label for s in pair if s.alive]}"
        )
        watch.cancel()
        records = [r for r in await read_run(kafka["admin"], topics) if r.message is not None]
        answers = [r.message.command_id for r in records if isinstance(r.message, FundsDeposited)]
        assert sorted(map(str, answers)) == sorted(d.command_id for d in deposits), answers
        assert any(s.alive for s in pair), [s.log_tail(8) for s in pair]
        assert len(supervise.exits) < MAX_RESTARTS, supervise.codes()
        for label, code, logged in supervise.exits:
            assert code == EXIT_FATAL, (label, code, logged[-3000:])
            assert "fatal: exiting" in logged, (label, logged[-3000:])
        fenced = [logged for _, _, logged in supervise.exits if "producer fenced" in logged]
        assert fenced, f"nobody met the fence: exits {supervise.codes()}"
        assert all("HOLDEM_INSTANCE_ID" in logged for logged in fenced), fenced
        report = await audit_run(kafka["admin"], topics)
        assert report.ok, report.violations[:10]
    finally:
        if watch is not None:
            watch.cancel()
        await launcher.stop()


async def answered(broker: LocalBroker, topics: Topics, deposits: list[Deposit]) -> None:
    wanted = {d.command_id for d in deposits}
    deadline = time.monotonic() + SERVING_WITHIN_S
    while True:
        records = await read_run(broker.connection("admin"), topics, roles=["wallet"])
        found = {r.message.command_id for r in records if isinstance(r.message, FundsDeposited)}
        if wanted <= found:
            return
        assert time.monotonic() < deadline, f"unanswered: {sorted(wanted - found)}"
        await asyncio.sleep(1.0)
