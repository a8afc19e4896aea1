"""Running the soak: the broker, the services, the load and the sampler, then the audit and
the report; ``main`` is ``python -m holdem.harness.soak``."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import logging
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from holdem.client import Operator
from holdem.core.contracts import TableTerms, TimeoutPolicy
from holdem.core.wire.headers import operator_of_prefix
from holdem.core.wire.topics import Topics
from holdem.harness.auditor_service import CHECKPOINT_S as AUDITOR_CHECKPOINT_S
from holdem.harness.chaos import Figures, Supervisor
from holdem.harness.chaos_auditor import LiveAuditor
from holdem.harness.soak.config import NAMES, PARTITIONS, TABLES, Config, Samples
from holdem.harness.soak.load import Load
from holdem.harness.soak.plots import plot
from holdem.harness.soak.report import markdown
from holdem.harness.soak.sampling import Sampler
from holdem.harness.soak.statistics import figures
from holdem.harness.soak.verdict import verdict
from holdem.ops.broker import LocalBroker
from holdem.ops.create_topics import ensure_findings_topic
from holdem.ops.launcher import Launcher
from holdem.runtime.topic_setup import ensure_topics


def table_terms(prefix: str) -> TableTerms:
    """The soak's tables: euro stakes around its 5.00 ante, a decision time no player needs."""
    return TableTerms(
        operator_id=operator_of_prefix(prefix),
        currency="EUR",
        ante_min=100,
        ante_max=10_000,
        bonus_max=5_000,
        chips=(100, 250, 500),
        decision_timeout_s=60,
        timeout_policy=TimeoutPolicy.FOLD,
    )


def git_head() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


async def soak(config: Config) -> dict[str, Any]:
    """Run the soak and write its report; the figures (``verdict``: what failed)."""
    log_dir = config.logs()
    broker = LocalBroker(log_dir / "kafka")
    try:
        await asyncio.to_thread(broker.up)
        principals = broker.principals()
        topics = Topics.unique("soak")
        prefix = topics.prefix
        await ensure_topics(principals["admin"], topics, partitions=PARTITIONS, wait=60)
        await asyncio.to_thread(broker.authorize, prefix)
        await ensure_findings_topic(principals["admin"], topics)
        assert broker.bootstrap is not None
        # The live auditor (holdem-auditor, its own read-only principal) folds the log as it is
        # written, from the first record: the soak's audit (issue 31 item 5). It checkpoints as
        # deployed (every 30 s), not as often as chaos has it.
        auditor = LiveAuditor.of(
            principals["auditor"], topics, log_dir, checkpoint_s=AUDITOR_CHECKPOINT_S
        )
        launcher = Launcher(broker.bootstrap, log_dir, prefix, PARTITIONS, credentials=principals)
        samples = Samples()
        restarts = Figures("soak")
        await launcher.start(NAMES)
        for label in set(launcher.services) - set(NAMES):
            launcher.services[label].retired = True
        auditing = asyncio.create_task(auditor.supervise())
        try:
            async with Operator(principals["admin"], topics, PARTITIONS) as admin:
                for n in range(TABLES):
                    await admin.create_table(f"soak-{n}", table_terms(prefix))
            async with Operator(principals["operator"], topics, PARTITIONS) as operator:
                load = Load(operator, config, samples, topics.prefix[-8:])
                await load.fund()
                sampler = Sampler(
                    config, samples, launcher, broker, principals["admin"], topics, auditor
                )
                # A service that exits (exit 70: fenced, evicted, a broken invariant) is started
                # again, as its supervisor would in production; each such exit is a failure
                # of the run, and the run goes on to show what followed.
                supervisor = Supervisor(launcher, restarts)
                stop = asyncio.Event()
                began = time.monotonic()
                load.began = sampler.began = began
                tasks = [
                    asyncio.create_task(load.run(stop)),
                    asyncio.create_task(sampler.run(stop)),
                ]
                watch = asyncio.create_task(supervisor.run())
                await asyncio.sleep((config.warmup_minutes + config.minutes) * 60)
                stop.set()
                await asyncio.gather(*tasks)
                watch.cancel()
                seconds = time.monotonic() - began
            alive = {label: launcher.services[label].alive for label in NAMES}
            # The auditor to the log's end, stopped (its last checkpoint written), and its
            # fold's verdict over the whole log read from that checkpoint.
            audit_began = time.monotonic()
            line, problems = await auditor.finish(principals["admin"], topics)
            caught_up = time.monotonic() - audit_began
            report = auditor.final_report(topics)
        finally:
            auditor.stopping = True
            auditing.cancel()
            await auditor.process.stop()
            await launcher.stop()
        audit = {
            "ok": report.ok and not problems,
            "by": "the live auditor",
            "records": report.records,
            "rounds": report.rounds,
            "ended": report.ended,
            "violations": (problems + report.violations)[:10],
            "seconds": round(caught_up, 1),  # from the load's end to the auditor at the log's
            "line": line,
        }
    finally:
        await asyncio.to_thread(broker.down, wipe=True)
    found = figures(config, samples, seconds, audit)
    found["commit"] = git_head()
    found["services_alive_at_end"] = alive
    found["exits"] = dict(restarts.exits)  # "label:code": unasked exits the supervisor restarted
    found["restart_to_ready_s"] = [round(s, 1) for s in restarts.restarts]
    found["verdict"] = (
        verdict(found)
        + [f"{n} ended" for n, up in alive.items() if not up]
        + ([f"exited and restarted: {found['exits']}"] if found["exits"] else [])
    )
    config.out.mkdir(parents=True, exist_ok=True)
    plots = plot(samples, config.out, found["warmup_seconds"])
    (config.out / "soak.json").write_text(json.dumps(found, indent=1) + "\n")
    command = (
        f"make soak SOAK_MINUTES={config.minutes:g} SOAK_WARMUP={config.warmup_minutes:g} "
        f"SOAK_RATE={config.rate:g}"
    )
    (config.out / "README.md").write_text(markdown(found, plots, command))
    return found


def parse_args(argv: list[str] | None) -> Config:
    # The package's page is the soak's description (read, not imported: no import circle).
    package = sys.modules[__package__ or "holdem.harness.soak"]
    parser = argparse.ArgumentParser(
        prog="python -m holdem.harness.soak", description=package.__doc__
    )
    add = parser.add_argument
    defaults = Config()
    add("--minutes", type=float, default=defaults.minutes, help="measured, after the warm-up")
    add("--warmup-minutes", type=float, default=defaults.warmup_minutes)
    add("--rate", type=float, default=defaults.rate, help="rounds started per second")
    add("--out", type=Path, default=defaults.out, help="where the report goes")
    add("--sample-s", type=float, default=defaults.sample_s)
    add("--void-every", type=int, default=defaults.void_every)
    add("--session-every", type=int, default=defaults.session_every)
    args = parser.parse_args(argv)
    if args.minutes <= 0 or args.rate <= 0 or args.sample_s <= 0 or args.warmup_minutes < 0:
        parser.error("minutes, rate and sample-s must be positive, warmup-minutes not negative")
    if min(args.void_every, args.session_every) < 1:
        parser.error("void-every and session-every must be at least 1")
    return Config(
        minutes=args.minutes,
        warmup_minutes=args.warmup_minutes,
        rate=args.rate,
        out=args.out,
        sample_s=args.sample_s,
        void_every=args.void_every,
        session_every=args.session_every,
    )


def main(argv: list[str] | None = None) -> int:
    config = parse_args(argv)
    config = dataclasses.replace(config, log_dir=config.logs())
    logging.getLogger("aiokafka").setLevel(logging.CRITICAL)
    print(
        f"soak: {config.warmup_minutes:g} min of warm-up, then {config.minutes:g} min measured, "
        f"at {config.rate:g} rounds/s; logs in {config.log_dir}"
    )
    found = asyncio.run(soak(config))
    print(json.dumps({k: found[k] for k in ("rounds", "memory", "latency", "max_lag")}, indent=1))
    for line in found["verdict"]:
        print(f"soak: {line}")
    print(f"soak: {'FAILED' if found['verdict'] else 'passed'}; report in {config.out}")
    return 1 if found["verdict"] else 0
