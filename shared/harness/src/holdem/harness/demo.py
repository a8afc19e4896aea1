"""`make run`: a local Kafka, the four services as processes, a player load, summary and audit."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

from holdem.client import Operator, seamless_run
from holdem.client.seamless_sim import FaultyOperator, OperatorWallet
from holdem.core.cards import parse_cards
from holdem.core.strategy import PUBLISHED, Decide
from holdem.harness.audit import AuditReport, audit_run
from holdem.harness.demo_live import live_view
from holdem.harness.demo_plot import plot_rtp
from holdem.harness.demo_report import Exact, Setup, exact_rtp, strategy_for, summary
from holdem.harness.load import Plan, Tally, fund, play
from holdem.ops import acl
from holdem.ops.launcher import (
    METRICS_PORTS,
    Launcher,
    LocalBroker,
    free_port,
    principals_from_env,
)
from holdem.runtime.topic_setup import ensure_topics

DEFAULT_ROUNDS = 200  # --rounds 0 (make run's default ROUNDS=0) plays this many
EXACT_TIMEOUT_S = 600.0  # the full enumeration takes ~30 s on two cores, once; then it is cached
SAMPLE_DEAL = (parse_cards("AsKd"), parse_cards("2c7h9s"))
INTERRUPT_DEBOUNCE_S = 1.0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    env = os.environ
    parser = argparse.ArgumentParser(prog="python -m holdem.harness.demo", description=__doc__)
    add = parser.add_argument
    add("--rounds", type=int, default=0, help=f"rounds to play; 0 = {DEFAULT_ROUNDS}")
    add("--players", type=int, default=16, help="players betting at the same time")
    add("--strategy", default="basic", help="player strategy from holdem.core.strategy")
    add("--voids", type=int, default=-1, help="rounds the operator voids; -1 = 1 per 50, max 5")
    add("--ante", type=int, default=500, help="ante in minor units")
    add("--aa-bonus", type=int, default=250, help="AA Bonus bet in minor units (0 = none)")
    add("--partitions", type=int, default=int(env.get("HOLDEM_PARTITIONS", "3")))
    add("--prefix", default=env.get("HOLDEM_TOPIC_PREFIX"), help="topic prefix (the tenant's id)")
    add("--bootstrap", default=env.get("HOLDEM_KAFKA_BOOTSTRAP"), help="else a local broker")
    add("--log-dir", type=Path, default=None, help="services' logs; default a new temp dir")
    add("--no-metrics", action="store_true", help="do not serve /metrics on 9101-9104")
    add("--step-timeout", type=float, default=60.0, help="bound on each wait for an answer, s")
    add("--no-exact", action="store_true", help="skip the exact RTP figures (enumeration)")
    add("--plot", type=Path, default=None, help="RTP picture (PNG); default LOG_DIR/rtp.png")
    add("--no-plot", action="store_true", help="do not draw the RTP picture")
    add(
        "--seamless",
        action="store_true",
        help="the wallet in seamless mode, answered by the reference operator wallet",
    )
    args = parser.parse_args(argv)
    if args.rounds < 0 or args.players < 1:
        parser.error("--rounds must be >= 0 and --players >= 1")
    args.rounds = args.rounds or DEFAULT_ROUNDS
    if args.voids < 0:
        args.voids = min(5, max(1, args.rounds // 50))
    return args


@contextlib.asynccontextmanager
async def setup(args: argparse.Namespace, tag: str) -> AsyncIterator[Setup]:
    """The broker (ours unless one is given), the topics, and a log dir; broker down at exit."""
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix=f"holdem-demo-{tag}-"))
    broker = None if args.bootstrap else LocalBroker(log_dir / "kafka")
    try:
        if broker is not None:
            print("starting a local Kafka broker (deploy/kafka/kafka.sh up) ...", flush=True)
        bootstrap = args.bootstrap or await asyncio.to_thread(broker.up)  # type: ignore[union-attr]
        # Our own broker is empty: the default names. A shared one gets a prefix of this run's.
        prefix = args.prefix if args.prefix is not None else ("" if broker else f"demo-{tag}")
        principals = broker.principals() if broker else principals_from_env(bootstrap)
        found = Setup(bootstrap, prefix, args.partitions, log_dir, broker is not None, principals)
        await ensure_topics(principals["admin"], found.topics, args.partitions)
        if args.seamless:  # the operator's write on the seamless replies (ADR 015)
            await acl.apply(principals["admin"], acl.plan(prefix, seamless=True))
        yield found
    finally:
        if broker is not None:
            await asyncio.to_thread(broker.down)


def metrics_ports(args: argparse.Namespace) -> dict[str, int]:
    """9101-9104 unless switched off or taken (then that service serves none)."""
    if args.no_metrics:
        return {}
    return {name: port for name, port in METRICS_PORTS.items() if free_port(port)}


@contextlib.contextmanager
def stop_on_interrupt(stop: asyncio.Event) -> Iterator[None]:
    """First Ctrl-C: no new rounds, rounds in flight finish, the summary and audit still run.
    Another Ctrl-C a second later interrupts at once (`uv run` forwards the terminal's SIGINT,
    so one keypress can arrive twice)."""
    loop = asyncio.get_running_loop()
    first: list[float] = []

    def interrupted() -> None:
        if first and time.monotonic() - first[0] > INTERRUPT_DEBOUNCE_S:
            loop.remove_signal_handler(signal.SIGINT)
            signal.raise_signal(signal.SIGINT)
        if not first:
            first.append(time.monotonic())
            print("\ninterrupted: finishing the rounds in flight (Ctrl-C again to abort)")
        stop.set()

    loop.add_signal_handler(signal.SIGINT, interrupted)
    try:
        yield None
    finally:
        loop.remove_signal_handler(signal.SIGINT)


def plan_of(args: argparse.Namespace, tag: str) -> Plan:
    return Plan(
        rounds=args.rounds,
        players=args.players,
        ante=args.ante,
        aa_bonus=args.aa_bonus,
        voids=args.voids,
        step_s=args.step_timeout,
        tag=tag,
    )


async def run(args: argparse.Namespace) -> int:
    tag = uuid.uuid4().hex[:8]
    plan, decide, stop = plan_of(args, tag), strategy_for(args.strategy), asyncio.Event()
    # The first decision may build the strategy's table (optimal): before the clock starts.
    async with asyncio.timeout(EXACT_TIMEOUT_S):
        await asyncio.to_thread(decide, *SAMPLE_DEAL)
    # Before the play, so the live view shows the observed RTP converging on the exact one.
    exact = await exact_or_why(args)
    async with setup(args, tag) as where:
        ports = metrics_ports(args)
        launcher = Launcher(
            where.bootstrap,
            where.log_dir,
            where.prefix,
            where.partitions,
            ports,
            credentials=where.principals,
            extra_env={"HOLDEM_WALLET_MODE": "seamless"} if args.seamless else {},
        )
        print(
            f"starting dealer, wallet, settlement, query as processes (logs: {where.log_dir}) ..."
        )
        started = time.monotonic()
        async with launcher:
            print(f"services ready in {time.monotonic() - started:.1f}s; playing", flush=True)
            async with operator_wallet(where, plan, args.seamless):
                tally = await _play(
                    where, plan, decide, stop, exact, fund_players=not args.seamless
                )
            report = await audit_run(where.principals["admin"], where.topics)
        picture = draw(args, where, tally, exact)
        print(summary(args, where, ports, tally, report, plan, exact, picture))
    return exit_code(args, tally, report, stop.is_set())


def draw(args: argparse.Namespace, where: Setup, tally: Tally, exact: Exact) -> str:
    """The RTP picture's path, or why there is none."""
    if args.no_plot:
        return "not drawn: --no-plot"
    if len(tally.trajectory) < 2:
        return "not drawn: fewer than 3 settled rounds"
    path = args.plot or where.log_dir / "rtp.png"
    return str(plot_rtp(tally.trajectory, exact.main, path, args.strategy))


async def exact_or_why(args: argparse.Namespace) -> Exact:
    """The strategy's exact figures, unless switched off or not ready within the bound."""
    sheet = PUBLISHED.get(args.strategy, ("-", "-"))
    if args.no_exact:
        return Exact(None, None, "not computed: --no-exact", sheet)
    print("exact RTP figures (full enumeration, cached after the first time) ...", flush=True)
    try:
        async with asyncio.timeout(EXACT_TIMEOUT_S):
            return await asyncio.to_thread(exact_rtp, args.strategy)
    except TimeoutError:
        return Exact(None, None, f"not ready in {EXACT_TIMEOUT_S:.0f}s", sheet)


@contextlib.asynccontextmanager
async def operator_wallet(where: Setup, plan: Plan, seamless: bool) -> AsyncIterator[None]:
    """In seamless mode, the reference operator wallet answering the game's wallet as the
    operator principal (every player starts there with what the plan would deposit)."""
    if not seamless:
        yield
        return
    stopping = asyncio.Event()
    wallet = FaultyOperator(OperatorWallet(opening=plan.deposit()))
    task = asyncio.create_task(
        seamless_run.serve(where.principals["operator"], where.topics, wallet, stopping=stopping)
    )
    try:
        yield
    finally:
        stopping.set()
        async with asyncio.timeout(30):
            await task


async def _play(
    where: Setup,
    plan: Plan,
    decide: Decide,
    stop: asyncio.Event,
    exact: Exact,
    *,
    fund_players: bool = True,
) -> Tally:
    async with Operator(where.principals["operator"], where.topics, where.partitions) as operator:
        if fund_players:  # a seamless wallet refuses deposits: the operator's wallet holds it
            await fund(operator, plan)
        tally = Tally()
        with stop_on_interrupt(stop):
            async with live_view(tally, plan.rounds, exact.main):
                return await play(operator, plan, decide, stop, tally)


def exit_code(args: argparse.Namespace, tally: Tally, report: AuditReport, stopped: bool) -> int:
    """0 only if every round asked for ended and every invariant holds."""
    if not report.ok or tally.stalled:
        return 1
    if tally.rounds != args.rounds:
        return 130 if stopped else 1
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
